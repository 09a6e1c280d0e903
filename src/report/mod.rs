//! Pure exporters: a result model in, bytes out. No measuring here.

pub mod table;
