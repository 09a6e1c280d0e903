//! iolab: a storage and file-system benchmark lab for Linux.
//!
//! The binary (`main.rs`) is thin glue: `cli` (clap definitions) -> `config` (validated
//! runtime config) -> `app` (dispatch) -> `commands::*` -> `runner` + `engine` + `workload`
//! -> `model` (the result document) -> `report` (pure exporters).

pub mod analysis;
pub mod app;
pub mod cli;
pub mod commands;
pub mod config;
pub mod dist;
pub mod engine;
pub mod error;
pub mod fs;
pub mod model;
pub mod report;
pub mod runner;
pub mod stats;
pub mod sysinfo;
pub mod units;
pub mod workload;
