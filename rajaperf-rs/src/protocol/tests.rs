//! A stand-in for the CUDA process speaks the protocol's other side, so that both
//! directions are checked byte for byte.

use super::*;
use crate::problem::KernelId;
use crate::{reference, setup};
use std::io::Cursor;

/// What the baseline process decodes from a request.
struct Request {
    kernel: String,
    tuning: String,
    reps: usize,
    pad_mib: usize,
    params: Vec<(String, i64)>,
    scalars: Vec<(String, f64)>,
    inputs: Vec<(String, Vec<f64>)>,
    outputs: Vec<(String, Vec<f64>)>,
    indices: Vec<(String, Vec<i64>)>,
}

fn decode_request(bytes: &[u8]) -> anyhow::Result<Request> {
    let mut r = Reader(Cursor::new(bytes));
    r.magic()?;
    let kernel = r.string()?;
    let tuning = r.string()?;
    let reps = r.u32()?;
    let pad_mib = r.u32()?;
    let params = (0..r.u32()?).map(|_| Ok((r.string()?, r.i64()?))).collect::<anyhow::Result<_>>()?;
    let scalars = (0..r.u32()?).map(|_| Ok((r.string()?, r.f64()?))).collect::<anyhow::Result<_>>()?;
    let mut lists = Vec::new();
    for _ in 0..2 {
        let list = (0..r.u32()?).map(|_| Ok((r.string()?, r.array()?))).collect::<anyhow::Result<_>>()?;
        lists.push(list);
    }
    let outputs = lists.pop().unwrap_or_default();
    let inputs = lists.pop().unwrap_or_default();
    let indices = (0..r.u32()?)
        .map(|_| {
            let name = r.string()?;
            anyhow::ensure!(matches!(r.u8()?, 4 | 8), "an index width is 4 or 8 bytes");
            Ok((name, r.index_array()?))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Request { kernel, tuning, reps, pad_mib, params, scalars, inputs, outputs, indices })
}

fn encode_response(status: i32, message: &str, outputs: &[Vec<f64>]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&status.to_le_bytes());
    put_str(&mut out, message);
    put_str(&mut out, "Stand-in GPU");
    for t in [0.5f64, 0.25, 0.125] {
        out.extend_from_slice(&t.to_le_bytes());
    }
    for b in [1000u64, 500, 3, 1] {
        out.extend_from_slice(&b.to_le_bytes());
    }
    put_u32(&mut out, outputs.len());
    for o in outputs {
        put_array(&mut out, o, f64::to_le_bytes);
    }
    out
}

#[test]
fn a_request_carries_the_whole_problem() {
    let p = setup::setup(KernelId::Hydro1d, 100);
    let req = decode_request(&encode_request(&p, "default", 7, 6)).unwrap();
    assert_eq!(
        (req.kernel.as_str(), req.tuning.as_str(), req.reps, req.pad_mib),
        ("HYDRO_1D", "default", 7, 6)
    );
    assert_eq!(req.params, vec![("iend".to_owned(), 100)]);
    let scalars: Vec<f64> = req.scalars.iter().map(|s| s.1).collect();
    assert_eq!(scalars, vec![p.scalar("q"), p.scalar("r"), p.scalar("t")]);
    assert_eq!(req.inputs.len(), 2);
    assert_eq!((req.inputs[1].0.as_str(), &req.inputs[1].1[..]), ("z", p.input("z")));
    assert_eq!((req.outputs[0].0.as_str(), req.outputs[0].1.len()), ("x", 112));
    assert!(req.indices.is_empty());
}

#[test]
fn a_request_names_its_tuning() {
    let p = setup::setup(KernelId::ReduceSum, 100);
    let req = decode_request(&encode_request(&p, "blkatm_occgs_256", 3, 0)).unwrap();
    assert_eq!((req.kernel.as_str(), req.tuning.as_str(), req.reps), ("REDUCE_SUM", "blkatm_occgs_256", 3));
    assert_eq!((req.inputs.len(), req.outputs.len()), (1, 1));
}

#[test]
fn a_request_carries_index_lists() {
    let p = setup::setup(KernelId::ZonalAccumulation3d, 1000);
    let req = decode_request(&encode_request(&p, "default", 1, 0)).unwrap();
    assert_eq!(req.indices.len(), 1);
    assert_eq!(
        (req.indices[0].0.as_str(), &req.indices[0].1[..]),
        ("real_zones", p.index_list("real_zones"))
    );
}

#[test]
fn a_response_brings_back_outputs_and_timing() {
    let mut p = setup::setup(KernelId::MulAddSub, 300);
    reference::run(&mut p, 1);
    let outs: Vec<Vec<f64>> = p.outputs.iter().map(|a| a.data.clone()).collect();
    let resp = read_response(Cursor::new(encode_response(0, "", &outs))).unwrap();
    assert_eq!(resp.outputs, outs);
    assert_eq!(resp.device, "Stand-in GPU");
    assert_eq!(resp.timing.kernel_seconds, 0.5);
    assert_eq!((resp.timing.h2d_bytes, resp.timing.d2h_bytes), (1000, 500));
    assert_eq!((resp.timing.h2d_copies, resp.timing.d2h_copies), (3, 1));
}

#[test]
fn failures_and_foreign_streams_are_errors() {
    let err = read_response(Cursor::new(encode_response(3, "no such kernel", &[]))).unwrap_err();
    assert!(err.to_string().contains("no such kernel"), "{err}");
    let err = read_response(Cursor::new(b"HTTP/1.1 200 OK\r\n".to_vec())).unwrap_err();
    assert!(err.to_string().contains("another protocol"), "{err}");
    let err = read_response(Cursor::new(MAGIC.to_vec())).unwrap_err();
    assert!(err.to_string().contains("closed its output early"), "{err:#}");
}

#[test]
fn the_copy_bandwidth_request_is_an_ordinary_request_without_arrays() {
    let bytes = encode_copy_bandwidth_request(1 << 25, 5);
    let req = decode_request(&bytes).unwrap();
    assert_eq!((req.kernel.as_str(), req.tuning.as_str()), (COPY_BANDWIDTH_KERNEL, "default"));
    assert_eq!((req.reps, req.pad_mib), (5, 0));
    assert_eq!(req.params, [("n".to_owned(), 1i64 << 25)]);
    assert!(req.scalars.is_empty() && req.inputs.is_empty() && req.outputs.is_empty());
    assert!(req.indices.is_empty());
    // Nothing after the last list: the helper reads the next request from the next byte.
    assert_eq!(
        bytes.len(),
        8 + 4 + COPY_BANDWIDTH_KERNEL.len() + 4 + "default".len() + 4 + 4 + 4 + (4 + 1 + 8) + 4 * 4
    );
}
