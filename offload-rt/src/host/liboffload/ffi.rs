//! Raw LLVM 22.1 liboffload API (`include/offload/OffloadAPI.h`, API version 0.0.1),
//! declared by hand and loaded at run time. The API is unstable: LLVM 23 changes `olInit`,
//! `olLaunchKernel` and more, so these declarations are pinned to 22 and the loader refuses
//! other majors.
#![allow(non_camel_case_types, non_snake_case, reason = "C names of the liboffload API")]
#![allow(dead_code, reason = "declares the API subset the runtime uses or is about to use")]

use std::ffi::{c_char, c_void};

/// The error a failing call returns; owned by the library for the whole process.
#[repr(C)]
pub struct ol_error_struct_t {
    pub code: u32,
    pub details: *const c_char,
}
/// Null on success, else a pointer to the error.
pub type ol_result_t = *const ol_error_struct_t;

pub type ol_device_handle_t = *mut c_void;
pub type ol_platform_handle_t = *mut c_void;
pub type ol_queue_handle_t = *mut c_void;
pub type ol_program_handle_t = *mut c_void;
pub type ol_symbol_handle_t = *mut c_void;
pub type ol_event_handle_t = *mut c_void;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ol_dimensions_t {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ol_kernel_launch_size_args_t {
    pub dimensions: usize,
    pub num_groups: ol_dimensions_t,
    pub group_size: ol_dimensions_t,
    pub dyn_shared_memory: usize,
}

/// `ol_alloc_type_t`
pub const OL_ALLOC_TYPE_HOST: u32 = 0;
pub const OL_ALLOC_TYPE_DEVICE: u32 = 1;
/// `ol_device_info_t`
pub const OL_DEVICE_INFO_PLATFORM: u32 = 1;
pub const OL_DEVICE_INFO_NAME: u32 = 2;
pub const OL_DEVICE_INFO_PRODUCT_NAME: u32 = 3;
pub const OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE: u32 = 7;
pub const OL_DEVICE_INFO_NUM_COMPUTE_UNITS: u32 = 12;
pub const OL_DEVICE_INFO_GLOBAL_MEM_SIZE: u32 = 17;
/// `ol_platform_info_t`
pub const OL_PLATFORM_INFO_BACKEND: u32 = 3;
/// `ol_platform_backend_t`
pub const OL_PLATFORM_BACKEND_CUDA: u32 = 1;
pub const OL_PLATFORM_BACKEND_AMDGPU: u32 = 2;
pub const OL_PLATFORM_BACKEND_HOST: u32 = 4;
/// `ol_symbol_kind_t`
pub const OL_SYMBOL_KIND_KERNEL: u32 = 0;
pub const OL_SYMBOL_KIND_GLOBAL_VARIABLE: u32 = 1;
/// `ol_symbol_info_t`
pub const OL_SYMBOL_INFO_KIND: u32 = 0;
pub const OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS: u32 = 1;
pub const OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE: u32 = 2;

pub type ol_device_iterate_cb_t = unsafe extern "C" fn(ol_device_handle_t, *mut c_void) -> bool;

/// Name of every error code, indexed by `ol_errc_t`.
pub const ERRC_NAMES: [&str; 25] = [
    "SUCCESS",
    "UNKNOWN",
    "HOST_IO",
    "INVALID_BINARY",
    "INVALID_NULL_POINTER",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "OUT_OF_RESOURCES",
    "INVALID_SIZE",
    "INVALID_ENUMERATION",
    "HOST_TOOL_NOT_FOUND",
    "INVALID_VALUE",
    "UNIMPLEMENTED",
    "UNSUPPORTED",
    "ASSEMBLE_FAILURE",
    "COMPILE_FAILURE",
    "LINK_FAILURE",
    "BACKEND_FAILURE",
    "UNINITIALIZED",
    "INVALID_NULL_HANDLE",
    "INVALID_PLATFORM",
    "INVALID_DEVICE",
    "INVALID_QUEUE",
    "INVALID_EVENT",
    "SYMBOL_KIND",
];

/// Declares the function table: one field per entry point, filled by [`Api::load`].
macro_rules! api {
    ($($name:ident: fn($($arg:ty),* $(,)?);)*) => {
        /// Entry points of the loaded library. The `Library` field keeps them valid.
        pub struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) -> ol_result_t,)*
            _lib: libloading::Library,
        }

        impl Api {
            /// Resolves every entry point of `lib`.
            ///
            /// # Safety
            ///
            /// `lib` must be LLVM 22's liboffload, whose functions have the signatures
            /// declared here.
            pub unsafe fn load(lib: libloading::Library) -> Result<Api, String> {
                Ok(Api {
                    $($name: {
                        // SAFETY: the caller guarantees the symbol has this signature; the
                        // pointer stays valid because `Api` owns `lib`.
                        let sym = unsafe {
                            lib.get::<unsafe extern "C" fn($($arg),*) -> ol_result_t>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                        };
                        *sym.map_err(|e| format!("missing symbol {}: {e}", stringify!($name)))?
                    },)*
                    _lib: lib,
                })
            }
        }
    };
}

api! {
    olInit: fn();
    olIterateDevices: fn(ol_device_iterate_cb_t, *mut c_void);
    olGetDeviceInfo: fn(ol_device_handle_t, u32, usize, *mut c_void);
    olGetDeviceInfoSize: fn(ol_device_handle_t, u32, *mut usize);
    olGetPlatformInfo: fn(ol_platform_handle_t, u32, usize, *mut c_void);
    olCreateQueue: fn(ol_device_handle_t, *mut ol_queue_handle_t);
    olDestroyQueue: fn(ol_queue_handle_t);
    olSyncQueue: fn(ol_queue_handle_t);
    olCreateProgram: fn(ol_device_handle_t, *const c_void, usize, *mut ol_program_handle_t);
    olDestroyProgram: fn(ol_program_handle_t);
    olGetSymbol: fn(ol_program_handle_t, *const c_char, u32, *mut ol_symbol_handle_t);
    olGetSymbolInfo: fn(ol_symbol_handle_t, u32, usize, *mut c_void);
    olMemAlloc: fn(ol_device_handle_t, u32, usize, *mut *mut c_void);
    olMemFree: fn(*mut c_void);
    olMemcpy: fn(ol_queue_handle_t, *mut c_void, ol_device_handle_t, *const c_void, ol_device_handle_t, usize);
    olMemFill: fn(ol_queue_handle_t, *mut c_void, usize, *const c_void, usize);
    olCreateEvent: fn(ol_queue_handle_t, *mut ol_event_handle_t);
    olSyncEvent: fn(ol_event_handle_t);
    olDestroyEvent: fn(ol_event_handle_t);
    olLaunchKernel: fn(ol_queue_handle_t, ol_device_handle_t, ol_symbol_handle_t, *const c_void, usize, *const ol_kernel_launch_size_args_t);
}
