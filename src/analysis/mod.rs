//! Analysis on top of measurements: cluster slack and its cost, SSD endurance.
pub mod endurance;
pub mod matrix;
pub mod slack;
