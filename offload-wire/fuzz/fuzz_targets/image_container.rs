//! The device-image container reader on arbitrary bytes: it must return images or an error,
//! never panic, hang or read out of bounds; what it returns must lie inside the input, and a
//! container it reads must write back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_wire::images;

fuzz_target!(|data: &[u8]| {
    let _ = images::container_len(data);
    if let Ok(parsed) = images::parse(data) {
        let range = data.as_ptr_range();
        for i in &parsed {
            assert!(range.contains(&i.data.as_ptr()) || i.data.is_empty());
            let _ = images::select(&parsed, i.arch);
        }
        assert_eq!(images::write(&parsed), data, "a container that parses writes back to itself");
        let _ = images::describe(&parsed);
    }
});
