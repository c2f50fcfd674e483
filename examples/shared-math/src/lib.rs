//! Math that a program's host code and its kernels share: a `no_std` crate of the workspace,
//! listed in `offload-examples`' `device-dependencies`, so its functions compile for the host,
//! the CPU backend and each GPU alike.
#![no_std]

use num_traits::Float;

/// Hermite interpolation between `edge0` and `edge1`: 0 below, 1 above, smooth between.
pub fn smoothstep<T: Float>(edge0: T, edge1: T, x: T) -> T {
    let t = ((x - edge0) / (edge1 - edge0)).max(T::zero()).min(T::one());
    let two = T::one() + T::one();
    t * t * (two + T::one() - two * t)
}

/// The logistic function `1 / (1 + e^-x)`.
pub fn logistic<T: Float>(x: T) -> T {
    T::one() / (T::one() + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothstep_clamps_and_is_symmetric() {
        assert_eq!(smoothstep(0.0f32, 1.0, -3.0), 0.0);
        assert_eq!(smoothstep(0.0f32, 1.0, 7.0), 1.0);
        assert_eq!(smoothstep(0.0f64, 1.0, 0.5), 0.5);
        assert!((smoothstep(0.0f64, 1.0, 0.25) + smoothstep(0.0, 1.0, 0.75) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn logistic_is_one_half_at_zero() {
        assert_eq!(logistic(0.0f64), 0.5);
        assert!(logistic(40.0f32) > 0.999_999);
    }
}
