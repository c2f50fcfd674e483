//! End-to-end tests of `cargo offload` on scratch projects: the three passes, the images they
//! embed (checked with `ptxas` and `llvm-readelf`), caching, and the error messages. They need
//! the nightly toolchain with rust-src and llvm-tools, `ptxas` and LLVM 22 (`scripts/setup.sh`
//! installs all of them), but no GPU: the executables run on the CPU backend here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The scratch projects share one target directory (so `core` is built once per GPU target)
/// and cargo-offload's device crate within it, so the tests take turns.
static SERIAL: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn target_dir() -> PathBuf {
    repo().join("target/e2e")
}

struct Scratch {
    dir: PathBuf,
    name: String,
}

const SAXPY: &str = r#"#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn saxpy(a: f32, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi += a * x[i];
        }
    }

    // (A parameter named like its kernel: the entry point still calls the kernel.)
    #[kernel]
    pub fn fill(v: u32, mut fill: Region<u32>) {
        if let Some(o) = fill.mine() {
            *o = v;
        }
    }
}

fn main() {
    let dev = offload::Device::default().unwrap();
    let x = vec![1.0f32; 1000];
    let mut y = vec![2.0f32; 1000];
    gpu::saxpy::launch(&dev, 1000, 3.0, &x, &mut y).unwrap();
    assert!(y.iter().all(|v| *v == 5.0));
    let mut out = vec![0u32; 77];
    gpu::fill::launch(&dev, 77, 9, &mut out).unwrap();
    assert!(out.iter().all(|v| *v == 9));
    println!("verified on {dev}");
}
"#;

impl Scratch {
    fn new(name: &str, main_rs: &str) -> Scratch {
        let dir = target_dir().join("projects").join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\noffload-rt = {{ path = {:?} }}\n\n[workspace]\n",
            repo().join("offload-rt").display().to_string()
        );
        std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        std::fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        std::fs::write(dir.join("src/main.rs"), main_rs).unwrap();
        Scratch { dir, name: name.to_owned() }
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.dir).env("CARGO_TARGET_DIR", target_dir()).env_remove("OFFLOAD_DEVICE");
        cmd
    }

    fn offload(&self, args: &[&str]) -> Output {
        self.offload_with(args, |_| {})
    }

    fn offload_with(&self, args: &[&str], tweak: impl FnOnce(&mut Command)) -> Output {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_cargo-offload"));
        cmd.arg("offload").args(args);
        tweak(&mut cmd);
        cmd.output().unwrap()
    }

    fn exe(&self) -> PathBuf {
        target_dir().join("offload/host/debug").join(&self.name)
    }

    fn edit(&self, from: &str, to: &str) {
        let path = self.dir.join("src/main.rs");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{from:?} not in main.rs");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn ok(out: Output) -> String {
    let t = text(&out);
    assert!(out.status.success(), "command failed:\n{t}");
    t
}

fn failed(out: Output) -> String {
    let t = text(&out);
    assert!(!out.status.success(), "command succeeded but should not have:\n{t}");
    t
}

/// `ptxas`, wherever `scripts/setup.sh` or a CUDA install put it.
fn ptxas() -> PathBuf {
    if let Ok(p) = which("ptxas") {
        return p;
    }
    let cuda = PathBuf::from("/usr/local/cuda/bin/ptxas");
    if cuda.is_file() {
        return cuda;
    }
    // pip's, in the default Python or in the virtual environment setup.sh makes where the
    // system Python takes no packages.
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    let venv = data.map(|d| d.join("cargo-offload/venv/bin/python3")).filter(|p| p.is_file());
    let found = [PathBuf::from("python3")].into_iter().chain(venv).find_map(|python| {
        let out =
            Command::new(python).args(["-c", "import nvidia; print(nvidia.__path__[0])"]).output().ok()?;
        let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("cu13/bin/ptxas");
        p.is_file().then_some(p)
    });
    found.expect("ptxas not found: run scripts/setup.sh (pip install nvidia-cuda-nvcc==13.0.88)")
}

fn which(name: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

fn llvm_readelf() -> PathBuf {
    let p = PathBuf::from("/usr/lib/llvm-22/bin/llvm-readelf");
    assert!(
        p.is_file(),
        "llvm-readelf from LLVM 22 not found: run scripts/setup.sh (apt-get install llvm-22)"
    );
    p
}

#[test]
fn build_embeds_ptx_cubin_and_amd_images_that_validate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_images", SAXPY);
    let log = ok(s.offload(&["build", "--target-gpu", "sm_90,gfx90a"]));
    assert!(log.contains("Finished 1 executable with device images for sm_90, gfx90a"), "{log}");
    assert!(!log.contains("their text is dropped"), "no kernel prints: {log}");

    let inspect: serde_json::Value =
        serde_json::from_slice(&s.offload(&["inspect", "--json", s.exe().to_str().unwrap()]).stdout).unwrap();
    let images = inspect["images"].as_array().unwrap();
    let kinds: Vec<(String, String)> = images
        .iter()
        .map(|i| (i["kind"].as_str().unwrap().to_owned(), i["arch"].as_str().unwrap().to_owned()))
        .collect();
    let want = [("PTX", "sm_90"), ("cubin", "sm_90"), ("AMD code object", "gfx90a")];
    assert_eq!(kinds, want.map(|(k, a)| (k.to_owned(), a.to_owned())), "{inspect:#}");
    for i in images {
        assert_eq!(i["kernels"].as_array().unwrap().len(), 2, "{i:#}");
        assert!(i["bytes"].as_u64().unwrap() > 500, "{i:#}");
    }
    // The cubin's resources per kernel, from ptxas: registers, and no local memory for these.
    let resources = images[1]["resources"].as_object().unwrap();
    assert_eq!(resources.len(), 2, "{inspect:#}");
    for r in resources.values() {
        assert!((8..=255).contains(&r["registers"].as_u64().unwrap()), "{r:#}");
        assert_eq!(r["local_bytes"], 0, "{r:#}");
        assert!(r["static_shared_bytes"].is_u64(), "{r:#}");
    }
    assert_eq!(inspect["modules"][0]["kernels"], serde_json::json!(["saxpy", "fill"]));

    let dir = target_dir().join("e2e_images_extracted");
    ok(s.offload(&["inspect", s.exe().to_str().unwrap(), "--extract", dir.to_str().unwrap()]));
    // The read-only input `x` of saxpy loads through the non-coherent cache: the aliasing
    // guarantees of `&[T]` and `Region<T>` reach LLVM.
    let ptx = std::fs::read_to_string(dir.join("sm_90.ptx")).unwrap();
    assert!(ptx.contains("ld.global.nc"), "no ld.global.nc in the PTX:\n{ptx}");
    // Without panic sites the image holds the kernels alone: no trap record, no module-scope
    // global at all.
    assert!(!ptx.contains(".global .align"), "a module-scope global in a default build's PTX:\n{ptx}");
    let cubin = dir.join("check.cubin");
    let out = Command::new(ptxas())
        .arg("-arch=sm_90")
        .arg(dir.join("sm_90.ptx"))
        .arg("-o")
        .arg(&cubin)
        .output()
        .unwrap();
    assert!(out.status.success(), "ptxas rejected the PTX: {}", text(&out));

    let out = Command::new(llvm_readelf()).args(["-h", "-s"]).arg(dir.join("gfx90a.hsaco")).output().unwrap();
    let elf = ok(out);
    assert!(elf.contains("EM_AMDGPU"), "{elf}");
    let symbols: Vec<&str> =
        images[2]["kernels"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    for k in symbols {
        assert!(elf.contains(&format!("{k}.kd")), "no kernel descriptor for {k}:\n{elf}");
    }

    // `--emit`: the device code as text, named after the executable: PTX, the cubin's SASS
    // (nvdisasm) and the code object's AMD assembly (llvm-objdump), each naming every kernel.
    let emitted = target_dir().join("e2e_images_emitted");
    let _ = std::fs::remove_dir_all(&emitted);
    let exe = s.exe();
    let log = ok(s.offload(&[
        "inspect",
        exe.to_str().unwrap(),
        "--emit",
        "ptx,sass,asm",
        "--emit-dir",
        emitted.to_str().unwrap(),
    ]));
    let file = |ext: &str| {
        let path = emitted.join(format!("{}.{ext}", exe.file_name().unwrap().to_str().unwrap()));
        assert!(log.contains(&path.display().to_string()), "{log}");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let (ptx, sass, asm) = (file("sm_90.ptx"), file("sm_90.sass"), file("gfx90a.s"));
    for k in images[0]["kernels"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()) {
        assert!(ptx.contains(&format!(".entry {k}(")), "{k} not in the PTX");
        assert!(sass.contains(k) && sass.contains("EXIT"), "{k} not in the SASS:\n{sass}");
        assert!(
            asm.contains(&format!("<{k}>:")) && asm.contains("s_endpgm"),
            "{k} not in the AMD assembly:\n{asm}"
        );
    }
    // Without nvdisasm: an error that says what to install; nothing else is affected.
    let t = failed(s.offload_with(&["inspect", exe.to_str().unwrap(), "--emit", "sass"], |c| {
        c.env("OFFLOAD_NVDISASM", "/nonexistent/nvdisasm");
    }));
    assert!(
        t.contains("emitting SASS needs `nvdisasm`") && t.contains("pip install nvidia-cuda-nvdisasm"),
        "{t}"
    );

    let run = Command::new(s.exe()).output().unwrap();
    let t = ok(run);
    assert!(t.contains("verified on the CPU emulation backend"), "{t}");
    assert!(t.contains("no usable GPU"), "the CPU fallback must say why: {t}");
}

/// `a` is updated around an update of `b`: only if the two outputs cannot alias may LLVM keep
/// `a`'s element in a register (one load and one store each) instead of storing and reloading it.
const BUMP: &str = r#"#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn bump(v: f32, mut a: Region<f32>, mut b: Region<f32>) {
        if let (Some(ai), Some(bi)) = (a.mine(), b.mine()) {
            *ai += v;
            *bi += v;
            *ai += v;
        }
    }
}

fn main() {
    let dev = offload::Device::default().unwrap();
    let (mut a, mut b) = (vec![1.0f32; 100], vec![2.0f32; 100]);
    gpu::bump::launch(&dev, 100, 3.0, &mut a, &mut b).unwrap();
    assert!(a.iter().all(|v| *v == 7.0) && b.iter().all(|v| *v == 5.0));
    println!("verified on {dev}");
}
"#;

#[test]
fn amd_kernel_pointers_are_noalias_like_on_nvidia() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_amd_noalias", BUMP);
    // The device linker keeps the optimised bitcode of the AMD link next to its output (in
    // the project's own device directory: `CARGO_OFFLOAD_CACHE=off`).
    let deps = target_dir().join("offload/device/amdgcn-amd-amdhsa-gfx90a/amdgcn-amd-amdhsa/release/deps");
    let kept_bitcode = || {
        std::fs::read_dir(&deps).ok().into_iter().flatten().flatten().map(|e| e.path()).find(|p| {
            p.extension().is_some_and(|e| e == "bc")
                && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("offload_device_"))
        })
    };
    if let Some(old) = kept_bitcode() {
        let _ = std::fs::remove_file(old);
    }
    // Neither the image cache nor cargo's fingerprint may skip the link that writes it.
    let _ = std::fs::remove_dir_all(target_dir().join("offload/cache"));
    let lib = target_dir().join("offload/device/crate/src/lib.rs");
    if let Ok(f) = std::fs::File::options().append(true).open(lib) {
        f.set_modified(std::time::SystemTime::now()).unwrap();
    }
    ok(s.offload_with(&["build", "--target-gpu", "gfx90a"], |c| {
        c.env("OFFLOAD_KEEP_BC", "1").env("CARGO_OFFLOAD_CACHE", "off");
    }));
    let kept = kept_bitcode().expect("the AMD link kept its bitcode");
    let llvm = |tool: &str| llvm_readelf().with_file_name(tool);

    // The code object: each output loaded once and stored once.
    let dir = target_dir().join("e2e_amd_noalias_extracted");
    ok(s.offload(&["inspect", s.exe().to_str().unwrap(), "--extract", dir.to_str().unwrap()]));
    let asm =
        ok(Command::new(llvm("llvm-objdump")).arg("-d").arg(dir.join("gfx90a.hsaco")).output().unwrap());
    let count = |op: &str| asm.lines().filter(|l| l.trim_start().starts_with(op)).count();
    assert_eq!(
        (count("global_load"), count("global_store")),
        (2, 2),
        "an output reloaded or stored twice:\n{asm}"
    );

    // The optimised IR of the link: every kernel pointer parameter is noalias.
    let ir = ok(Command::new(llvm("llvm-dis")).arg(&kept).arg("-o").arg("-").output().unwrap());
    let kernels: Vec<&str> = ir.lines().filter(|l| l.starts_with("define amdgpu_kernel ")).collect();
    assert_eq!(kernels.len(), 1, "{ir}");
    let k = kernels[0];
    let params = &k[k.find('(').unwrap()..k.rfind(')').unwrap()];
    let pointers: Vec<&str> = params.split(", ").filter(|p| p.starts_with("ptr ")).collect();
    assert_eq!(pointers.len(), 2, "{k}");
    assert!(pointers.iter().all(|p| p.starts_with("ptr noalias ")), "kernel pointers without noalias: {k}");
    assert!(ok(Command::new(s.exe()).output().unwrap()).contains("verified"));
}

/// A five-point stencil read through `offload::Stencil`: one bounds check for the span, and no
/// load with a check of its own.
const STENCIL: &str = r#"#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn smooth(five: Stencil<5>, x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let (Some(v), Some(p)) = (y.mine(), five.get(x, i)) {
            *v = p[0] + p[1] + p[2] + p[3] + p[4];
        }
    }

    #[kernel]
    pub fn smooth_view(five: Stencil<5>, x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if i >= 20 && i + 20 < y.len() {
            let n = five.view(x, i);
            if let Some(v) = y.mine() {
                *v = n.at(2) * (n.at(0) + n.at(4)) - n.at(1) * n.at(3);
            }
        }
    }

    /// Three inputs, each indexed with its own bounds check: the checks share one trap
    /// (the device linker's `merge_traps`), so they fold into one comparison and one branch.
    #[kernel]
    pub fn sum3(a: &[f64], b: &[f64], c: &[f64], mut out: Region<f64>) {
        let i = out.index();
        if let Some(o) = out.mine() {
            *o = a[i] + b[i] + c[i];
        }
    }

    /// At most 128 threads a block, and four blocks a multiprocessor: CUDA's
    /// `__launch_bounds__(128, 4)`.
    #[kernel(launch_bounds(128, 4))]
    pub fn bounded(x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(v) = y.mine() {
            *v = 2.0 * x[i];
        }
    }

    /// DEL_DOT_VEC_2D (rajaperf-rs): four arrays at a cell's corners, and a reciprocal (whose
    /// slow path is a branch) before the arithmetic on the last two arrays.
    #[kernel]
    pub fn divergence(corners: Stencil<2, 2>, x: &[f64], y: &[f64], fx: &[f64], fy: &[f64], mut div: Region<f64>) {
        let i = div.index();
        if i + 21 >= div.len() {
            return;
        }
        // Each array checked on its own, as `read_together` would not: the shape in which LLVM
        // moved loads past the arithmetic (without `together`, five of the sixteen here).
        let [[[x4, x1], [x3, x2]], [[y4, y1], [y3, y2]], [[fx4, fx1], [fx3, fx2]], [[fy4, fy1], [fy3, fy2]]] =
            together([x, y, fx, fy].map(|a| corners.read_runs(a, i)));
        let (xi, xj) = (0.5 * (x1 + x2 - x3 - x4), 0.5 * (x2 + x3 - x4 - x1));
        let (yi, yj) = (0.5 * (y1 + y2 - y3 - y4), 0.5 * (y2 + y3 - y4 - y1));
        let (fxi, fxj) = (0.5 * (fx1 + fx2 - fx3 - fx4), 0.5 * (fx2 + fx3 - fx4 - fx1));
        let (fyi, fyj) = (0.5 * (fy1 + fy2 - fy3 - fy4), 0.5 * (fy2 + fy3 - fy4 - fy1));
        let rarea = 1.0 / (xi * yj - xj * yi + 1e-20);
        let affine = (fy1 + fy2 + fy3 + fy4) / (y1 + y2 + y3 + y4);
        if let Some(d) = div.mine() {
            *d = rarea * (fxi * yj - fxj * yi) + rarea * (fyj * xi - fyi * xj) + affine;
        }
    }
}

fn main() {
    let dev = offload::Device::default().unwrap();
    let x: Vec<f64> = (0..100).map(f64::from).collect();
    let mut y = vec![0.0; 100];
    let five = offload::Stencil::new([-20, -1, 0, 1, 20]);
    gpu::smooth::launch(&dev, 100, five, &x, &mut y).unwrap();
    assert!((20..80).all(|i| y[i] == 5.0 * i as f64) && y[..20].iter().all(|v| *v == 0.0));
    gpu::smooth_view::launch(&dev, 100, five, &x, &mut y).unwrap();
    assert_eq!(y[50], 50.0 * 100.0 - 49.0 * 51.0);
    // A launch beyond the kernel's launch bounds is an error naming the kernel, on every backend.
    let e = gpu::bounded::launch(&dev, 100, &x, &mut y).unwrap_err().to_string();
    assert!(e.contains("gpu::bounded") && e.contains("at most 128"), "{e}");
    gpu::bounded::launch(&dev, offload::Grid::threads(100).block_size(128), &x, &mut y).unwrap();
    assert_eq!(y[99], 198.0);
    let mut z = vec![0.0; 100];
    gpu::sum3::launch(&dev, 100, &x, &y, &x, &mut z).unwrap();
    assert!((0..100).all(|i| z[i] == 2.0 * x[i] + y[i]), "sum3");
    let corners = offload::Stencil::<2, 2>::runs([0, 20]);
    let [a, b, c, d] = [1.0, 2.0, 3.0, 4.0].map(|s: f64| x.iter().map(|v| (v * s).sin() + 2.0).collect::<Vec<f64>>());
    gpu::divergence::launch(&dev, 100, corners, &a, &b, &c, &d, &mut y).unwrap();
    for i in 0..79 {
        let at = |v: &[f64], k: usize| v[i + k];
        let (x1, x2, x3, x4) = (at(&a, 1), at(&a, 21), at(&a, 20), at(&a, 0));
        let (y1, y2, y3, y4) = (at(&b, 1), at(&b, 21), at(&b, 20), at(&b, 0));
        let (f1, f2, f3, f4) = (at(&c, 1), at(&c, 21), at(&c, 20), at(&c, 0));
        let (g1, g2, g3, g4) = (at(&d, 1), at(&d, 21), at(&d, 20), at(&d, 0));
        let (xi, xj) = (0.5 * (x1 + x2 - x3 - x4), 0.5 * (x2 + x3 - x4 - x1));
        let (yi, yj) = (0.5 * (y1 + y2 - y3 - y4), 0.5 * (y2 + y3 - y4 - y1));
        let (fxi, fxj) = (0.5 * (f1 + f2 - f3 - f4), 0.5 * (f2 + f3 - f4 - f1));
        let (fyi, fyj) = (0.5 * (g1 + g2 - g3 - g4), 0.5 * (g2 + g3 - g4 - g1));
        let rarea = 1.0 / (xi * yj - xj * yi + 1e-20);
        let want = rarea * (fxi * yj - fxj * yi) + rarea * (fyj * xi - fyi * xj) + (g1 + g2 + g3 + g4) / (y1 + y2 + y3 + y4);
        assert!((y[i] - want).abs() <= 1e-9 * want.abs().max(1.0), "divergence at {i}: {} != {want}", y[i]);
    }
    // Last (a trap can leave a GPU context unusable): an input shorter than the output fails
    // the one shared check, an error naming the kernel on a GPU, a panic on the CPU.
    let short = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        gpu::sum3::launch(&dev, 100, &x, &y[..99], &x, &mut z).map_err(|e| e.to_string())
    }));
    assert!(matches!(&short, Err(_) | Ok(Err(_))), "a short input went unnoticed");
    if let Ok(Err(e)) = &short {
        assert!(e.contains("sum3"), "{e}");
    }
    println!("verified on {dev}");
}
"#;

/// With `OFFLOAD_PANIC_SITES=kernel` the image carries the panic sites, naming the user's file
/// and line, and `sum3`'s three checks still share one failure path (which records the site,
/// the block and the thread before the trap) and one branch to it.
#[test]
fn panic_sites_name_the_users_lines_and_keep_one_failure_path() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_sites", STENCIL);
    ok(s.offload_with(&["build", "--target-gpu", "sm_90"], |c| {
        c.env("OFFLOAD_PANIC_SITES", "kernel");
    }));
    let dir = target_dir().join("e2e_sites_extracted");
    let listing = ok(s.offload(&["inspect", s.exe().to_str().unwrap(), "--extract", dir.to_str().unwrap()]));
    let line = STENCIL.lines().position(|l| l.contains("*o = a[i] + b[i] + c[i];")).unwrap() + 1;
    assert!(
        listing.contains(&format!("src/main.rs:{line}")),
        "no panic site at src/main.rs:{line}:\n{listing}"
    );
    let ptx = std::fs::read_to_string(dir.join("sm_90.ptx")).unwrap();
    let start = ptx.find("_sum3(").unwrap_or_else(|| panic!("no sum3 in:\n{ptx}"));
    let body = &ptx[start..start + ptx[start..].find("\n}").unwrap()];
    let lines: Vec<&str> = body.lines().map(str::trim).collect();
    let record: Vec<usize> =
        (0..lines.len()).filter(|&k| lines[k].contains("[__offload_trap_record]")).collect();
    assert_eq!(record.len(), 1, "sum3: a failure path per check:\n{body}");
    let label = lines[..record[0]]
        .iter()
        .rev()
        .find_map(|l| l.split_whitespace().next().and_then(|w| w.strip_suffix(':')))
        .unwrap_or_else(|| panic!("sum3: no label before the failure path:\n{body}"));
    let branches = lines.iter().filter(|l| l.contains("bra") && l.ends_with(&format!("{label};"))).count();
    assert_eq!(branches, 1, "sum3: more than one branch to the failure path:\n{body}");
    assert!(ok(s.offload(&["inspect", "--json", s.exe().to_str().unwrap()])).contains("\"panic_sites\""));
}

#[test]
fn stencil_reads_have_one_check_for_the_span() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_stencil", STENCIL);
    ok(s.offload(&["build", "--target-gpu", "sm_90"]));
    let dir = target_dir().join("e2e_stencil_extracted");
    let listing = ok(s.offload(&["inspect", s.exe().to_str().unwrap(), "--extract", dir.to_str().unwrap()]));
    assert!(!listing.contains("panic sites"), "a default build records panic sites:\n{listing}");
    let ptx = std::fs::read_to_string(dir.join("sm_90.ptx")).unwrap();
    for kernel in ["smooth", "smooth_view"] {
        let start = ptx.find(&format!("_{kernel}(")).unwrap_or_else(|| panic!("no {kernel} in:\n{ptx}"));
        let body = &ptx[start..start + ptx[start..].find("\n}").unwrap()];
        let count = |pat: &str| body.lines().filter(|l| l.contains(pat)).count();
        assert_eq!(count("ld.global."), 5, "{kernel}: five reads:\n{body}");
        // `smooth` has no panic path at all (`get`); `smooth_view` one, for the span (a check
        // per read would add a panic call per read).
        assert!(count("call.uni") <= 1, "{kernel}: a check per read:\n{body}");
    }
    // `sum3`: three indexed reads, one trap and one branch to it.
    let start = ptx.find("_sum3(").unwrap_or_else(|| panic!("no sum3 in:\n{ptx}"));
    let body = &ptx[start..start + ptx[start..].find("\n}").unwrap()];
    let lines: Vec<&str> = body.lines().map(str::trim).collect();
    let traps: Vec<usize> = (0..lines.len()).filter(|&k| lines[k].starts_with("trap;")).collect();
    assert_eq!(traps.len(), 1, "sum3: a trap per check:\n{body}");
    let label = |at: usize| {
        lines[..at]
            .iter()
            .rev()
            .find_map(|l| l.split_whitespace().next().and_then(|w| w.strip_suffix(':')))
            .unwrap_or_else(|| panic!("sum3: no label before line {at}:\n{body}"))
    };
    let branches_to =
        |label: &str| lines.iter().filter(|l| l.contains("bra") && l.ends_with(&format!("{label};"))).count();
    assert_eq!(branches_to(label(traps[0])), 1, "sum3: more than one branch to the trap:\n{body}");
    // `launch_bounds(128, 4)` reaches the PTX as CUDA's `__launch_bounds__` does, and its
    // static does not.
    let start = ptx.find("_bounded(").unwrap_or_else(|| panic!("no bounded in:\n{ptx}"));
    let header = &ptx[start..start + ptx[start..].find('{').unwrap()];
    assert!(header.contains(".maxntid 128, 1, 1") && header.contains(".minnctapersm 4"), "{header}");
    assert!(!ptx.contains("__launch_bounds"), "the launch bounds' static is in the PTX");
    // `read_together`: all sixteen loads ahead of the first floating-point instruction (which
    // LLVM would otherwise put between them: see offload::together).
    let start = ptx.find("_divergence(").unwrap_or_else(|| panic!("no divergence in:\n{ptx}"));
    let body = &ptx[start..start + ptx[start..].find("\n}").unwrap()];
    let lines: Vec<&str> = body.lines().map(str::trim).collect();
    let loads: Vec<usize> = (0..lines.len()).filter(|&k| lines[k].starts_with("ld.global.nc")).collect();
    let first_fp =
        lines.iter().position(|l| l.contains(".f64") && !l.starts_with("ld.")).expect("no f64 arithmetic");
    assert_eq!(loads.len(), 16, "sixteen loads:\n{body}");
    assert!(loads.iter().all(|&k| k < first_fp), "a load after the first f64 arithmetic:\n{body}");
    assert!(ok(Command::new(s.exe()).output().unwrap()).contains("verified"));
}

#[test]
fn host_only_change_skips_the_device_compile_and_rebuilds_no_dependency() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_rebuild", SAXPY);
    let first = ok(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(first.contains("Offloaded 2 kernels") || first.contains("Fresh device images"), "{first}");

    s.edit("println!(\"verified on {dev}\");", "println!(\"verified on {dev} (edited)\");");
    let second = ok(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(second.contains("Fresh device images for sm_90"), "device compile ran again:\n{second}");
    assert!(!second.contains("Offloading"), "{second}");
    assert!(second.contains("Compiling e2e_rebuild"), "{second}");
    let rebuilt: Vec<&str> = second.lines().filter(|l| l.trim_start().starts_with("Compiling")).collect();
    assert_eq!(rebuilt.len(), 1, "only the edited crate may rebuild: {rebuilt:?}");
    let run = ok(Command::new(s.exe()).output().unwrap());
    assert!(run.contains("(edited)"), "{run}");
    let inspect = ok(s.offload(&["inspect", s.exe().to_str().unwrap()]));
    assert!(
        inspect.contains("PTX") && inspect.contains("sm_90"),
        "relinked executable lost its images: {inspect}"
    );

    s.edit("*o = v;", "*o = v + 0;");
    let third = ok(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(
        third.contains("Offloaded 2 kernels in 1 module for sm_90"),
        "kernel change must recompile:\n{third}"
    );
}

#[test]
fn plain_cargo_build_still_runs_on_the_cpu() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_plain", SAXPY);
    let t = ok(s.command(env!("CARGO")).args(["run", "--quiet"]).output().unwrap());
    assert!(t.contains("verified on the CPU emulation backend"), "{t}");
    assert!(
        t.contains("not `cargo offload build`")
            || t.contains("found no GPU")
            || t.contains("cannot load liboffload"),
        "{t}"
    );
}

#[test]
fn unknown_gpu_architecture_is_rejected_with_the_known_ones() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_badarch", SAXPY);
    let t = failed(s.offload(&["build", "--target-gpu", "sm_90,sm_91"]));
    assert!(t.contains("unknown GPU architecture `sm_91`"), "{t}");
    assert!(t.contains("sm_90a"), "the message lists the known architectures: {t}");
}

#[test]
fn kernels_that_print_are_said_to_print_nothing_on_amd() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_amdprint", SAXPY);
    s.edit("*yi += a * x[i];", "*yi += a * x[i];\n            offload::println!(\"y = {}\", *yi);");
    let t = ok(s.offload(&["build", "--target-gpu", "gfx90a"]));
    assert!(t.contains("warning: kernels of module `gpu` (src/main.rs) print"), "{t}");
    assert!(t.contains("on AMD GPUs (gfx90a) their text is dropped"), "{t}");
}

#[test]
fn missing_ptxas_warns_and_keeps_ptx() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_noptxas", SAXPY);
    let t = ok(s.offload_with(&["build", "--target-gpu", "sm_90"], |c| {
        c.env("OFFLOAD_PTXAS", "/nonexistent/ptxas");
    }));
    assert!(t.contains("ptxas not found"), "{t}");
    assert!(t.contains("pip install nvidia-cuda-nvcc"), "the warning says how to install it: {t}");
    let inspect = ok(s.offload(&["inspect", s.exe().to_str().unwrap()]));
    assert!(inspect.contains("PTX") && !inspect.contains("cubin"), "{inspect}");
}

#[test]
fn missing_liboffload_is_an_error_when_a_gpu_is_demanded_and_a_fallback_otherwise() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_nolib", SAXPY);
    ok(s.offload(&["build", "--target-gpu", "sm_90"]));
    let lib = "/nonexistent/libLLVMOffload.so.22.1";
    let demanded = failed(
        Command::new(s.exe()).env("OFFLOAD_DEVICE", "gpu").env("OFFLOAD_LIBRARY", lib).output().unwrap(),
    );
    assert!(demanded.contains("cannot load liboffload"), "{demanded}");
    assert!(demanded.contains("apt-get install liboffload-22"), "{demanded}");
    let fallback =
        ok(Command::new(s.exe()).env("OFFLOAD_LIBRARY", lib).env_remove("OFFLOAD_DEVICE").output().unwrap());
    assert!(fallback.contains("running kernels on the CPU emulation backend"), "{fallback}");
    assert!(fallback.contains("cannot load liboffload"), "the fallback says why: {fallback}");
}

#[test]
fn kernel_errors_point_at_the_users_lines() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // A type error: the host pass reports it at the user's line.
    let s = Scratch::new("e2e_typeerr", SAXPY);
    s.edit("*yi += a * x[i];", "*yi += a * x[i] + 1u8;");
    let t = failed(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(t.contains("src/main.rs:9"), "{t}");
    assert!(t.contains("failed to build the host program"), "{t}");

    // A float method only the host's std has (`f32::sqrt`): the host pass already rejects it,
    // at the user's line, with the `math::` function to use.
    let s = Scratch::new("e2e_stdfloat", SAXPY);
    s.edit("*yi += a * x[i];", "*yi += a * x[i].sqrt();");
    let t = failed(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(t.contains("src/main.rs:9"), "{t}");
    assert!(t.contains("math::sqrt(x)"), "{t}");
    assert!(t.contains("failed to build the host program"), "{t}");

    // An error only the device compile sees (an intrinsic of the host's architecture): reported
    // at the user's line too, not in generated code.
    let s = Scratch::new("e2e_deviceerr", SAXPY);
    s.edit("*yi += a * x[i];", "*yi += a * x[i]; core::arch::x86_64::_mm_pause();");
    let t = failed(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(t.contains("src/main.rs:9"), "{t}");
    assert!(t.contains("x86_64"), "{t}");
    assert!(t.contains("failed to compile the kernels for sm_90"), "{t}");
    assert!(!t.contains("src/m0.rs"), "generated paths leak into the message: {t}");
}

#[test]
fn identical_kernels_in_two_modules_keep_their_own_amd_descriptors() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let twins = r#"#[offload::kernels]
mod one {
    use offload::prelude::*;
    #[kernel]
    pub fn fill(v: u32, mut out: Region<u32>) {
        if let Some(o) = out.mine() {
            *o = v;
        }
    }
}

#[offload::kernels]
mod two {
    use offload::prelude::*;
    #[kernel]
    pub fn fill(v: u32, mut out: Region<u32>) {
        if let Some(o) = out.mine() {
            *o = v;
        }
    }
}

fn main() {
    let dev = offload::Device::default().unwrap();
    let (mut a, mut b) = (vec![0u32; 10], vec![0u32; 10]);
    one::fill::launch(&dev, 10, 1, &mut a).unwrap();
    two::fill::launch(&dev, 10, 2, &mut b).unwrap();
    assert!(a.iter().all(|v| *v == 1) && b.iter().all(|v| *v == 2));
    println!("verified");
}
"#;
    let s = Scratch::new("e2e_twins", twins);
    let log = ok(s.offload(&["build", "--target-gpu", "gfx90a"]));
    assert!(log.contains("Offloaded 2 kernels in 2 modules for gfx90a"), "{log}");
    assert!(ok(Command::new(s.exe()).output().unwrap()).contains("verified"));
}

/// A second binary of a scratch project, with a kernels module of its own.
const OTHER_BIN: &str = r#"#[offload::kernels]
mod other {
    use offload::prelude::*;

    #[kernel]
    pub fn twice(x: &[u32], mut y: Region<u32>) {
        let i = y.index();
        if let Some(o) = y.mine() {
            *o = 2 * x[i];
        }
    }
}

fn main() {
    let dev = offload::Device::default().unwrap();
    let mut y = vec![0u32; 4];
    other::twice::launch(&dev, 4, &[1u32, 2, 3, 4], &mut y).unwrap();
    assert_eq!(y, [2, 4, 6, 8]);
    println!("verified on {dev}");
}
"#;

#[test]
fn each_executable_carries_only_its_own_kernels_and_a_failing_one_fails_alone() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_per_exe", SAXPY);
    std::fs::create_dir_all(s.dir.join("src/bin")).unwrap();
    std::fs::write(s.dir.join("src/bin/other.rs"), OTHER_BIN).unwrap();
    let out = s.offload(&["build", "--bins", "--target-gpu", "sm_90", "--message-format", "json"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = ok(out);
    assert!(log.contains("Finished 2 executables"), "{log}");
    // `--message-format json`: every stdout line is JSON; cargo's messages, then ours.
    let messages: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let reason = |m: &serde_json::Value| m["reason"].as_str().unwrap_or_default().to_owned();
    assert!(messages.iter().any(|m| reason(m) == "compiler-artifact"), "{stdout}");
    let exes: Vec<&serde_json::Value> =
        messages.iter().filter(|m| reason(m) == "offload-executable").collect();
    assert_eq!(exes.len(), 2, "{stdout}");
    for e in &exes {
        let kernels: Vec<&str> =
            e["kernels"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
        let want: &[&str] = if e["label"] == "bin other" { &["twice"] } else { &["saxpy", "fill"] };
        assert_eq!(kernels, want, "{e}");
    }
    assert!(messages.iter().any(|m| reason(m) == "offload-images" && m["arch"] == "sm_90"), "{stdout}");
    assert_eq!(messages.last().map(reason).as_deref(), Some("offload-build-finished"), "{stdout}");
    assert_eq!(messages.last().unwrap()["success"], true);
    let inspect = |exe: &std::path::Path| ok(s.offload(&["inspect", "--json", exe.to_str().unwrap()]));
    let main = inspect(&s.exe());
    let other = inspect(&target_dir().join("offload/host/debug/other"));
    assert!(main.contains("_saxpy") && !main.contains("_twice"), "{main}");
    assert!(other.contains("_twice") && !other.contains("_saxpy"), "{other}");

    // A kernel only the device compile rejects fails the executable that links it; the other
    // is still finished, and the build fails naming the one that is not.
    let path = s.dir.join("src/bin/other.rs");
    let broken = OTHER_BIN.replace("*o = 2 * x[i];", "*o = 2 * x[i]; core::arch::x86_64::_mm_pause();");
    std::fs::write(&path, broken).unwrap();
    let t = failed(s.offload(&["build", "--bins", "--target-gpu", "sm_90"]));
    assert!(t.contains("failed to compile the kernels for sm_90"), "{t}");
    assert!(t.contains("not finished: bin other"), "{t}");
    assert!(t.contains("Finished 1 executable"), "{t}");
    assert!(t.contains(&format!("Executable bin {}", s.name)), "{t}");
}

const DEVICE_DEPS: &str = r#"#[offload::kernels]
mod gpu {
    use num_traits::Float;
    use offload::prelude::*;
    use shared::ease;

    #[kernel(f32, f64)]
    pub fn eased<T: Float>(x: &[T], mut y: Region<T>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = ease(x[i]) + x[i].abs().sqrt();
        }
    }
}

fn main() {
    let dev = offload::Device::default().unwrap();
    let x: Vec<f64> = (0..1000).map(|i| f64::from(i) / 1000.0).collect();
    let mut y = vec![0.0f64; 1000];
    gpu::eased::launch::<f64>(&dev, 1000, &x, &mut y).unwrap();
    for (x, y) in x.iter().zip(&y) {
        assert!((y - (shared::ease(*x) + x.sqrt())).abs() < 1e-14, "{x}: {y}");
    }
    println!("verified on {dev}");
}
"#;

/// A `no_std` path crate that the scratch project's host code and kernels share.
const SHARED_LIB: &str = r#"#![no_std]
use num_traits::Float;

/// Smooth in-out easing of `t` in [0, 1].
pub fn ease<T: Float>(t: T) -> T {
    let two = T::one() + T::one();
    t * t * (two + T::one() - two * t)
}
"#;

#[test]
fn device_dependencies_from_crates_io_and_a_path_build_for_every_target_and_are_checked() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("e2e_device_deps", DEVICE_DEPS);
    let lib = |name: &str, body: &str, deps: &str| {
        let dir = s.dir.join(name);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n{deps}"
        );
        std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        std::fs::write(dir.join("src/lib.rs"), body).unwrap();
    };
    let num_traits = "num-traits = { version = \"0.2\", default-features = false, features = [\"libm\"] }\n";
    lib("shared", SHARED_LIB, num_traits);
    let manifest = s.dir.join("Cargo.toml");
    let base = std::fs::read_to_string(&manifest).unwrap();
    let with = |extra_deps: &str, device: &str| {
        let text = base.replacen(
            "[dependencies]\n",
            &format!("[dependencies]\n{num_traits}shared = {{ path = \"shared\" }}\n{extra_deps}"),
            1,
        );
        let text = text.replacen(
            "\n[workspace]\n",
            &format!("\n[package.metadata.offload]\ndevice-dependencies = [{device}]\n\n[workspace]\n"),
            1,
        );
        std::fs::write(&manifest, text).unwrap();
    };

    // Declared: the kernels build for both GPUs with both crates, and run on the CPU here.
    with("", "\"num-traits\", \"shared\"");
    let log = ok(s.offload(&["build", "--target-gpu", "sm_90,gfx90a"]));
    assert!(log.contains("Finished 1 executable with device images for sm_90, gfx90a"), "{log}");
    let device_manifest =
        std::fs::read_to_string(target_dir().join("offload/device/crate/Cargo.toml")).unwrap();
    assert!(
        device_manifest.contains("num-traits = { default-features = false, features = [\"libm\"]"),
        "{device_manifest}"
    );
    assert!(
        device_manifest
            .contains(&format!("shared = {{ path = {:?} }}", s.dir.join("shared").display().to_string()))
    );
    let run = Command::new(s.exe()).env("OFFLOAD_DEVICE", "cpu").output().unwrap();
    assert!(ok(run).contains("verified"));
    let inspect = ok(s.offload(&["inspect", s.exe().to_str().unwrap()]));
    assert!(
        inspect.contains("sm_90") && inspect.contains("gfx90a") && inspect.contains("eased__f64"),
        "{inspect}"
    );

    // A change in the shared crate's source changes the device images (their cache key); the
    // change is new in every run, so no earlier run's images match.
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    std::fs::write(
        s.dir.join("shared/src/lib.rs"),
        SHARED_LIB.replace("Smooth in-out", &format!("Smooth ({nonce})")),
    )
    .unwrap();
    let log = ok(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(log.contains("Offloaded"), "a path dependency's change rebuilds the images: {log}");

    // Not declared: the host build already rejects the `use`, at the user's line.
    with("", "\"num-traits\"");
    let t = failed(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(t.contains("`shared` is not a device dependency of this package"), "{t}");
    assert!(t.contains("src/main.rs:5"), "{t}");

    // Declared but not a dependency of the package: named, with what to add.
    with("", "\"num-traits\", \"shared\", \"libm\"");
    let t = failed(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(
        t.contains("`libm` is listed in the device-dependencies")
            && t.contains("not one of its [dependencies]"),
        "{t}"
    );

    // A device dependency that needs `std` fails naming it and the target.
    lib("hostonly", "pub fn name() -> std::string::String { std::string::String::from(\"host\") }\n", "");
    with("hostonly = { path = \"hostonly\" }\n", "\"num-traits\", \"shared\", \"hostonly\"");
    let t = failed(s.offload(&["build", "--target-gpu", "gfx90a"]));
    assert!(
        t.contains("the device dependency `hostonly` does not build for gfx90a (amdgcn-amd-amdhsa)"),
        "{t}"
    );
    assert!(t.contains("no_std"), "{t}");

    // A device dependency that depends on the runtime could read thread indices (or reach a
    // barrier) where the uniformity analysis, which sees kernels modules only, does not look:
    // refused, naming the way to the runtime.
    let runtime = repo().join("offload-rt");
    lib(
        "threads",
        "#![no_std]\npub fn half_warp() -> bool { offload::prelude::thread_idx_x() % 32 < 16 }\n",
        &format!("offload-rt = {{ path = {:?} }}\n", runtime.display().to_string()),
    );
    with("threads = { path = \"threads\" }\n", "\"num-traits\", \"shared\", \"threads\"");
    let t = failed(s.offload(&["build", "--target-gpu", "sm_90"]));
    assert!(
        t.contains("the device dependency `threads`")
            && t.contains("depends on `offload-rt` (threads → offload-rt)"),
        "{t}"
    );
}
