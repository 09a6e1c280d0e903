//! Terminal tables of `iolab info` (path, device chain side by side, SMART) and
//! `iolab endurance`. Pure: model in, text out.

use comfy_table::{Cell, ContentArrangement, Table};

use crate::analysis::endurance::fmt_si;
use crate::model::device::{BlockDeviceInfo, EnduranceReport, SmartInfo, StorageInfo};
use crate::os::text::terminal;
use crate::units::{capitalize, fmt_size_exact, fmt_size_iec};

fn table() -> Table {
    super::table::new_table(ContentArrangement::Dynamic)
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// What the relation column says, in words.
fn role(d: &BlockDeviceInfo) -> String {
    let under = d.under.as_deref().unwrap_or("?");
    match d.relation.as_str() {
        "holds-path" => "holds the path".into(),
        "asked" => "the device asked".into(),
        "partition-of" => format!("disk of {under}"),
        "backs-loop" => format!("holds {under}'s backing file"),
        "slave-of" => format!("member of {under}"),
        "fs-member" => format!("holds the file system with {under}"),
        other => other.into(),
    }
}

/// One row of an `attribute_table`: its label and the item's value, if it has one.
type Attr<T> = (&'static str, fn(&T) -> Option<String>);

/// One row per attribute, one column per device of the chain.
const DEVICE_ROWS: &[Attr<BlockDeviceInfo>] = &[
    ("Role", |d| Some(role(d))),
    ("Kind", |d| Some(d.kind.clone())),
    ("Device", |d| {
        Some(format!("{} ({})", d.dev_path, d.maj_min))
    }),
    ("Size", |d| {
        Some(format!(
            "{} ({} bytes)",
            fmt_size_iec(d.size_bytes),
            crate::units::fmt_thousands(d.size_bytes as f64)
        ))
    }),
    ("Partition", |d| {
        d.partition_number.map(|n| {
            format!(
                "#{n}, starts at {}",
                fmt_size_exact(d.partition_start_bytes.unwrap_or(0))
            )
        })
    }),
    ("Backing file", |d| {
        let f = d.loop_backing_file.clone()?;
        Some(if d.loop_backing_deleted == Some(true) {
            format!("{f} (deleted: the loop still holds it, no directory names it)")
        } else {
            f
        })
    }),
    ("Loop direct I/O", |d| d.loop_direct_io.map(yes_no)),
    ("Device-mapper name", |d| d.dm_name.clone()),
    ("RAID level", |d| d.md_level.clone()),
    ("Members (slaves)", |d| {
        (!d.slaves.is_empty()).then(|| d.slaves.join(", "))
    }),
    ("Used by (holders)", |d| {
        (!d.holders.is_empty()).then(|| d.holders.join(", "))
    }),
    ("Model", |d| d.model.clone()),
    ("Vendor", |d| d.vendor.clone()),
    ("Serial", |d| d.serial.clone()),
    ("Firmware", |d| d.firmware.clone()),
    ("Transport", |d| d.transport.clone()),
    ("Link speed", |d| d.link_speed.clone()),
    ("Rotational", |d| {
        d.rotational.map(|r| {
            if r {
                "yes (as the driver reports)"
            } else {
                "no (SSD or virtual)"
            }
            .into()
        })
    }),
    ("Logical / physical block", |d| {
        Some(format!(
            "{} / {} B",
            d.logical_block_size?, d.physical_block_size?
        ))
    }),
    ("Queue depth (nr_requests)", |d| {
        d.nr_requests.map(|n| n.to_string())
    }),
    ("Largest request", |d| {
        // Drivers without a limit report UINT_MAX (segment size) and INT_MAX KiB (request).
        let max = d.max_request_bytes?;
        let mut s = fmt_size_exact(max);
        match d.max_hw_request_bytes {
            Some(hw) if hw >= (i32::MAX as u64) * 1024 => s.push_str(" (no hardware limit)"),
            Some(hw) if hw != max => s.push_str(&format!(" (hardware {})", fmt_size_exact(hw))),
            _ => {}
        }
        if let Some(n) = d.max_segments {
            s.push_str(&format!("; {n} segments"));
            match d.max_segment_bytes {
                Some(seg) if seg >= u32::MAX as u64 => s.push_str(" of any size"),
                Some(seg) => s.push_str(&format!(" of up to {} each", fmt_size_exact(seg))),
                None => {}
            }
        }
        Some(s)
    }),
    ("Scheduler", |d| d.scheduler.clone()),
    ("Discard (TRIM)", |d| {
        d.discard_max_bytes.map(|m| {
            if m == 0 {
                "no".into()
            } else {
                format!(
                    "yes (up to {}, granularity {})",
                    fmt_size_iec(m),
                    fmt_size_exact(d.discard_granularity.unwrap_or(0))
                )
            }
        })
    }),
    ("Write cache", |d| {
        d.write_cache.as_ref().map(|w| match d.fua {
            Some(true) => format!("{w}, FUA"),
            _ => w.clone(),
        })
    }),
    ("Read / written since boot", |d| {
        let rw = format!(
            "{} / {}",
            fmt_size_iec(d.read_since_boot_bytes?),
            fmt_size_iec(d.written_since_boot_bytes?)
        );
        // A loop device keeps its counters across detach and attach: terabytes on a
        // 300 MiB image attached a minute ago are every image it has served since boot.
        Some(if d.kind == "loop" {
            format!("{rw} (by {} over every file attached since boot)", d.name)
        } else {
            rw
        })
    }),
    ("Read-only", |d| d.read_only.map(yes_no)),
    ("Removable", |d| d.removable.map(yes_no)),
];

const SMART_ROWS: &[Attr<SmartInfo>] = &[
    ("Model", |s| s.model.clone()),
    ("Serial", |s| s.serial.clone()),
    ("Firmware", |s| s.firmware.clone()),
    ("Health", |s| {
        s.health_passed
            .map(|p| if p { "PASSED" } else { "FAILING" }.into())
    }),
    ("Temperature", |s| {
        s.temperature_c.map(|t| format!("{t} °C"))
    }),
    ("Power-on hours", |s| {
        s.power_on_hours
            .map(|h| format!("{h} ({:.1} years)", h as f64 / 8766.0))
    }),
    ("Endurance used", |s| {
        s.percentage_used.map(|p| format!("{p} %"))
    }),
    ("Data written", |s| {
        s.data_written_bytes.map(|b| fmt_si(b as f64))
    }),
    ("Media errors", |s| s.media_errors.map(|e| e.to_string())),
    ("Reallocated sectors", |s| {
        s.reallocated_sectors.map(|e| e.to_string())
    }),
    ("Interface speed", |s| s.interface_speed.clone()),
];

pub fn info_table(info: &StorageInfo) -> String {
    let mut out = String::new();
    let mut t = table();
    // Every value here is the machine's (a path, mount options, a model from sysfs or
    // smartctl): shown as terminal text.
    t.set_header(vec!["Path", &terminal(&info.path)]);
    if let Some(m) = &info.mount {
        t.add_row(vec!["Mount point", &terminal(&m.mount_point)]);
        // `fuseblk` alone does not say whether ntfs-3g or exfat-fuse is mounted.
        let fs = match &m.fs_name {
            Some(name) => format!("{name} (through FUSE: {})", m.fs_type),
            None => m.fs_type.clone(),
        };
        t.add_row(vec!["File system", &terminal(&fs)]);
        t.add_row(vec!["Mounted from", &terminal(&m.source)]);
        t.add_row(vec!["Mount options", &terminal(&m.options)]);
    } else if info.kind == "device" {
        t.add_row(vec!["Mounted", "no"]);
    }
    out.push_str(&format!("{t}\n"));
    if let Some(r) = &info.no_device_reason {
        out.push_str(&format!("No block device: {}.\n", terminal(r)));
        return out;
    }
    let devices: Vec<&BlockDeviceInfo> = info.devices.iter().collect();
    let t = attribute_table("", &devices, |d| &d.name, DEVICE_ROWS);
    out.push_str(&format!("{t}\n"));
    if !info.smart.is_empty() {
        out.push_str(&smart_table(&info.smart));
    }
    out
}

/// One column per item (headed by its `name`, `corner` above the labels), one row per
/// attribute that at least one item has (`-` where another lacks it).
fn attribute_table<T>(
    corner: &str,
    items: &[&T],
    name: impl Fn(&T) -> &str,
    rows: &[Attr<T>],
) -> Table {
    let mut t = table();
    let mut header = vec![Cell::new(corner)];
    header.extend(items.iter().map(|i| Cell::new(terminal(name(i)))));
    t.set_header(header);
    for (label, get) in rows {
        let vals: Vec<Option<String>> = items.iter().map(|i| get(i)).collect();
        if vals.iter().all(Option::is_none) {
            continue;
        }
        let mut row = vec![label.to_string()];
        row.extend(
            vals.into_iter()
                .map(|v| v.map_or_else(|| "-".into(), |v| terminal(&v).into_owned())),
        );
        t.add_row(row);
    }
    t
}

fn smart_table(smart: &[SmartInfo]) -> String {
    let mut out = String::new();
    let available: Vec<&SmartInfo> = smart.iter().filter(|s| s.available).collect();
    if !available.is_empty() {
        let t = attribute_table("SMART", &available, |s| &s.device, SMART_ROWS);
        out.push_str(&format!("{t}\n"));
    }
    for s in smart.iter().filter(|s| !s.available) {
        out.push_str(&format!(
            "SMART of {}: not available: {}\n",
            terminal(&s.device),
            terminal(s.reason.as_deref().unwrap_or("unknown reason"))
        ));
    }
    out
}

pub fn endurance_table(r: &EnduranceReport) -> String {
    let mut t = table();
    t.set_header(vec!["Endurance", ""]);
    t.add_row(vec![
        "Rated endurance (TBW)".into(),
        fmt_si(r.tbw_bytes as f64),
    ]);
    t.add_row(vec![
        "Application writes per day".into(),
        fmt_si(r.daily_app_bytes as f64),
    ]);
    t.add_row(vec![
        "Write amplification".into(),
        format!(
            "{} ({})",
            crate::analysis::endurance::fmt_wa(r.write_amplification),
            r.write_amplification_source
        ),
    ]);
    t.add_row(vec![
        "Device writes per day".into(),
        fmt_si(r.daily_device_bytes),
    ]);
    t.add_row(vec!["Already used".into(), {
        // 0.4 % is not "0 %" (whole percentages, SMART's, stay whole).
        let used = format!("{:.2}", r.used_pct);
        let used = used.trim_end_matches('0').trim_end_matches('.');
        format!("{used} % ({})", r.used_source)
    }]);
    t.add_row(vec!["Endurance left".into(), fmt_si(r.remaining_bytes)]);
    let longest = crate::analysis::endurance::LONGEST_SHOWN_YEARS;
    let (days, years) = if r.days.is_finite() && r.years > longest {
        (
            format!(
                "more than {}",
                crate::units::fmt_thousands(longest * crate::analysis::endurance::DAYS_PER_YEAR)
            ),
            format!("more than {}", crate::units::fmt_thousands(longest)),
        )
    } else if r.days.is_finite() {
        (
            format!("{:.1}", r.days),
            crate::analysis::endurance::fmt_years(r.years),
        )
    } else {
        ("never".into(), "never".into())
    };
    t.add_row(vec!["Lifetime, days".into(), days]);
    t.add_row(vec!["Lifetime, years".into(), years]);
    if let Some(d) = &r.end_date {
        t.add_row(vec!["Rated TBW reached around".into(), d.clone()]);
    }
    let mut out = format!("{t}\n");
    if !r.per_test.is_empty() {
        let mut pt = table();
        pt.set_header(vec!["Test", "Write amplification"]);
        for (name, wa) in &r.per_test {
            pt.add_row(vec![
                terminal(name).into_owned(),
                crate::analysis::endurance::fmt_wa(*wa),
            ]);
        }
        out.push_str(&format!("{pt}\n"));
    }
    out.push_str(&format!("{}.\n", capitalize(&r.sentence)));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A freshly attached 300 MiB loop showed "6.5 TiB / 4.1 TiB" read and written since
    /// boot with nothing to say those were earlier images' I/O.
    #[test]
    fn a_loop_device_s_counters_say_they_span_every_image() {
        let mut d = BlockDeviceInfo {
            name: "loop0".into(),
            kind: "loop".into(),
            read_since_boot_bytes: Some(1 << 40),
            written_since_boot_bytes: Some(1 << 30),
            ..Default::default()
        };
        let row = |d: &BlockDeviceInfo| {
            DEVICE_ROWS
                .iter()
                .find(|(l, _)| *l == "Read / written since boot")
                .and_then(|(_, f)| f(d))
                .unwrap()
        };
        assert_eq!(
            row(&d),
            "1.0 TiB / 1.0 GiB (by loop0 over every file attached since boot)"
        );
        d.kind = "disk".into();
        d.name = "sda".into();
        assert_eq!(row(&d), "1.0 TiB / 1.0 GiB");
    }
}
