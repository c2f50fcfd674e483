// While a preload borrows host data, safe code cannot touch it (nor free it).
fn main() {
    let dev = offload::Device::cpu();
    let mut y = vec![0.0f32; 8];
    let staged = dev.preload_mut(&mut y).unwrap();
    y[0] = 1.0;
    drop(y);
    staged.finish().unwrap();

    let x = vec![1.0f32; 8];
    let read_only = dev.preload(&x).unwrap();
    let mut x = x;
    x.push(2.0);
    drop(read_only);
}
