//! The kernels-module record reader on arbitrary section bytes: records or an error, never a
//! panic; every record it reads survives a round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_wire::record;

fuzz_target!(|data: &[u8]| {
    if let Ok(records) = record::parse_section(data) {
        for r in records {
            let bytes = r.to_bytes();
            assert_eq!(record::parse_section(&bytes).expect("a written record reads back"), vec![r]);
        }
    }
});
