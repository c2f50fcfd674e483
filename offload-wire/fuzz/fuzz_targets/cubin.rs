//! The cubin reader on arbitrary bytes: it must return resources, nothing or an error, never
//! panic, hang or read out of bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_wire::cubin;

fuzz_target!(|data: &[u8]| {
    for symbol in ["k", "__offload_m_0_kernel", ""] {
        let _ = cubin::kernel_resources(data, symbol);
    }
});
