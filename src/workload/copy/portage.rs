//! The `source-tree` data set: a Gentoo portage-like tree (Fedorchuk's btrfs vs nilfs2
//! copies), tens of thousands of small files with the real tree's depth and fan-out. The
//! numbers are documented on `source_tree` and in docs/GUIDE.md (`iolab copy`).

use std::path::{Path, PathBuf};

use rand::Rng;

use super::tree::{FileEntry, Plan, lognormal, rng_for, unit};

const CAT_PREFIX: [&str; 16] = [
    "app", "dev", "media", "net", "sys", "x11", "games", "sci", "www", "kde", "gnome", "mail",
    "sec", "gui", "lxqt", "virtual",
];
const CAT_SUFFIX: [&str; 10] = [
    "misc", "libs", "util", "plugins", "apps", "themes", "tools", "base", "lang", "fonts",
];

/// Portage-like tree (Fedorchuk's btrfs vs nilfs2 copies). At scale 1: 160 categories,
/// 15,000 packages (categories drawn with a skew, so some hold hundreds and others a handful); per package a
/// metadata.xml (~900 B), a Manifest (~2.5 KB), a ChangeLog (~6 KB, wide spread), 1-4
/// ebuilds (~2.2 KB), and in 30 % of packages a files/ directory with 1-5 patches
/// (~3 KB); plus eclass/ (300 x ~12 KB), licenses/ (400 x ~8 KB) and a 4-level profiles/
/// tree (800 x ~1 KB). Depth up to 5, about 90,000 files and 255 MB.
pub(super) fn source_tree(seed: u64, scale: f64) -> Plan {
    let mut rng = rng_for("source-tree", seed);
    let mut p = Plan {
        name: "source-tree".into(),
        ..Default::default()
    };
    let n = |x: f64| ((x * scale).round() as u64).max(1);
    let packages = n(15_000.0);
    let cats = n(160.0).min(160);
    let push = |p: &mut Plan, rel: PathBuf, size: u64| {
        if let Some(d) = rel.parent() {
            p.add_dir(d.to_path_buf());
        }
        p.files.push(FileEntry { rel, size });
    };
    for (dir, count, mean, ext) in [
        ("eclass", n(300.0), 12_000.0, "eclass"),
        ("licenses", n(400.0), 8_000.0, "txt"),
    ] {
        for i in 0..count {
            let size = lognormal(&mut rng, mean, 0.8);
            push(
                &mut p,
                Path::new(dir).join(format!("{dir}-{i:03}.{ext}")),
                size,
            );
        }
    }
    for i in 0..n(800.0) {
        let a = rng.next_u64() % 6;
        let b = rng.next_u64() % 4;
        let c = rng.next_u64() % 3;
        let rel = PathBuf::from(format!(
            "profiles/arch-{a}/release-{b}/variant-{c}/profile-{i:03}"
        ));
        push(&mut p, rel, lognormal(&mut rng, 1_000.0, 0.6));
    }
    for j in 0..packages {
        // Skewed category choice (u^2): a few big categories, many small ones.
        let u = unit(&mut rng);
        let ci = ((u * u * cats as f64) as u64).min(cats - 1) as usize;
        let cat = format!("{}-{}", CAT_PREFIX[ci % 16], CAT_SUFFIX[ci / 16 % 10]);
        let pkg = Path::new(&cat).join(format!("pkg{j:05}"));
        push(
            &mut p,
            pkg.join("metadata.xml"),
            lognormal(&mut rng, 900.0, 0.3),
        );
        push(
            &mut p,
            pkg.join("Manifest"),
            lognormal(&mut rng, 2_500.0, 0.5),
        );
        push(
            &mut p,
            pkg.join("ChangeLog"),
            lognormal(&mut rng, 6_000.0, 1.0),
        );
        let ebuilds = match rng.next_u64() % 10 {
            0..=3 => 1,
            4..=6 => 2,
            7..=8 => 3,
            _ => 4,
        };
        for e in 0..ebuilds {
            let rel = pkg.join(format!("pkg{j:05}-{}.{e}.ebuild", 1 + e));
            push(&mut p, rel, lognormal(&mut rng, 2_200.0, 0.5));
        }
        if rng.next_u64() % 10 < 3 {
            for k in 0..1 + rng.next_u64() % 5 {
                let rel = pkg.join("files").join(format!("fix-{k}.patch"));
                push(&mut p, rel, lognormal(&mut rng, 3_000.0, 1.0));
            }
        }
    }
    p
}
