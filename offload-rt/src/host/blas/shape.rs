//! Shape checks, and the column-major call each routine becomes for a vendor library: pure
//! functions, so that the parameters the libraries get are unit-tested here.

use super::{BlasError, Gemm, Gemv, Layout, Op};

/// A `gemm` as a column-major library takes it (cuBLAS, rocBLAS): `C = α·op(P)·op(Q) + β·C`
/// where `P` is the user's `a` and `Q` the user's `b`, or, for a row-major call, `P` is `b`
/// and `Q` is `a` (`Cᵀ = op(B)ᵀ·op(A)ᵀ`; a row-major matrix is its transpose column-major).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GemmCall {
    pub transa: Op,
    pub transb: Op,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub lda: i32,
    pub ldb: i32,
    pub ldc: i32,
    /// Whether the library's first operand is the user's `b` (row-major calls).
    pub swap: bool,
}

impl GemmCall {
    /// The library's two operands, in order, from the user's `a` and `b`.
    pub fn operands<P>(&self, a: P, b: P) -> (P, P) {
        if self.swap { (b, a) } else { (a, b) }
    }
}

/// A `gemv` as a column-major library takes it: `y = α·op(A')·x + β·y` with `A'` `m × n`
/// column-major (a row-major `A` is `Aᵀ` column-major, so `op` flips).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GemvCall {
    pub trans: Op,
    pub m: i32,
    pub n: i32,
    pub lda: i32,
}

/// A matrix argument as stored.
struct Stored {
    argument: &'static str,
    rows: usize,
    cols: usize,
    layout: Layout,
    ld: Option<usize>,
}

impl Stored {
    /// Checks the argument's length `len`; returns its leading dimension.
    fn check(&self, routine: &'static str, len: usize) -> Result<usize, BlasError> {
        let (inner, outer) = match self.layout {
            Layout::RowMajor => (self.cols, self.rows),
            Layout::ColMajor => (self.rows, self.cols),
        };
        let min_ld = inner.max(1);
        let ld = self.ld.unwrap_or(min_ld);
        if ld < min_ld {
            let what = match self.layout {
                Layout::RowMajor => "columns",
                Layout::ColMajor => "rows",
            };
            return Err(BlasError::InvalidArgument {
                routine,
                reason: format!(
                    "ld{} = {ld} is less than the {inner} {what} of `{}` ({})",
                    self.argument,
                    self.argument,
                    self.describe(None)
                ),
            });
        }
        let needed = if inner == 0 || outer == 0 {
            Some(0)
        } else {
            (outer - 1).checked_mul(ld).and_then(|x| x.checked_add(inner))
        };
        let Some(needed) = needed else {
            return Err(BlasError::InvalidArgument {
                routine,
                reason: format!("`{}` ({}) is too large to address", self.argument, self.describe(self.ld)),
            });
        };
        let at_least = self.ld.is_some();
        if len == needed || (at_least && len > needed) {
            return Ok(ld);
        }
        Err(BlasError::Shape {
            routine,
            argument: self.argument,
            shape: self.describe(self.ld),
            expected: needed,
            actual: len,
            at_least,
        })
    }

    fn describe(&self, ld: Option<usize>) -> String {
        let layout = match self.layout {
            Layout::RowMajor => "row-major",
            Layout::ColMajor => "column-major",
        };
        match ld {
            Some(ld) => format!("{layout} {}×{}, ld{} {ld}", self.rows, self.cols, self.argument),
            None => format!("{layout} {}×{}", self.rows, self.cols),
        }
    }
}

/// The dimensions of an operand as stored, given `op(X)` is `rows × cols`.
fn stored_dims(op: Op, rows: usize, cols: usize) -> (usize, usize) {
    match op {
        Op::N => (rows, cols),
        Op::T => (cols, rows),
    }
}

/// A dimension or leading dimension as the libraries' 32-bit `int`.
fn int(routine: &'static str, what: &str, v: usize) -> Result<i32, BlasError> {
    i32::try_from(v).map_err(|_| BlasError::InvalidArgument {
        routine,
        reason: format!("{what} = {v} is over the BLAS libraries' 32-bit limit ({})", i32::MAX),
    })
}

/// Checks a `gemm` (`lens`: the lengths of `a`, `b`, `c`) and plans its column-major call.
pub(crate) fn plan_gemm(routine: &'static str, g: &Gemm, lens: [usize; 3]) -> Result<GemmCall, BlasError> {
    let (ar, ac) = stored_dims(g.trans_a, g.m, g.k);
    let (br, bc) = stored_dims(g.trans_b, g.k, g.n);
    let a = Stored { argument: "a", rows: ar, cols: ac, layout: g.layout, ld: g.lda };
    let b = Stored { argument: "b", rows: br, cols: bc, layout: g.layout, ld: g.ldb };
    let c = Stored { argument: "c", rows: g.m, cols: g.n, layout: g.layout, ld: g.ldc };
    let (lda, ldb, ldc) =
        (a.check(routine, lens[0])?, b.check(routine, lens[1])?, c.check(routine, lens[2])?);
    let (m, n, k) = (int(routine, "m", g.m)?, int(routine, "n", g.n)?, int(routine, "k", g.k)?);
    let (lda, ldb, ldc) = (int(routine, "lda", lda)?, int(routine, "ldb", ldb)?, int(routine, "ldc", ldc)?);
    Ok(match g.layout {
        Layout::ColMajor => {
            GemmCall { transa: g.trans_a, transb: g.trans_b, m, n, k, lda, ldb, ldc, swap: false }
        }
        Layout::RowMajor => GemmCall {
            transa: g.trans_b,
            transb: g.trans_a,
            m: n,
            n: m,
            k,
            lda: ldb,
            ldb: lda,
            ldc,
            swap: true,
        },
    })
}

/// Checks a `gemv` (`lens`: the lengths of `a`, `x`, `y`) and plans its column-major call.
pub(crate) fn plan_gemv(routine: &'static str, g: &Gemv, lens: [usize; 3]) -> Result<GemvCall, BlasError> {
    let a = Stored { argument: "a", rows: g.m, cols: g.n, layout: g.layout, ld: g.lda };
    let lda = a.check(routine, lens[0])?;
    let (x_len, y_len) = match g.trans {
        Op::N => (g.n, g.m),
        Op::T => (g.m, g.n),
    };
    let what = match g.trans {
        Op::N => "A",
        Op::T => "Aᵀ",
    };
    for (argument, want, got, shape) in [
        ("x", x_len, lens[1], format!("columns of {what}")),
        ("y", y_len, lens[2], format!("rows of {what}")),
    ] {
        if want != got {
            return Err(BlasError::Shape {
                routine,
                argument,
                shape: format!("a vector of the {shape}, {}×{} as stored", g.m, g.n),
                expected: want,
                actual: got,
                at_least: false,
            });
        }
    }
    let (m, n, lda) = (int(routine, "m", g.m)?, int(routine, "n", g.n)?, int(routine, "lda", lda)?);
    Ok(match g.layout {
        Layout::ColMajor => GemvCall { trans: g.trans, m, n, lda },
        Layout::RowMajor => GemvCall { trans: g.trans.flip(), m: n, n: m, lda },
    })
}

/// Checks that two vectors have the same length; returns it.
pub(crate) fn same_length(
    routine: &'static str,
    (x, x_len): (&'static str, usize),
    (y, y_len): (&'static str, usize),
) -> Result<usize, BlasError> {
    if x_len != y_len {
        return Err(BlasError::Shape {
            routine,
            argument: y,
            shape: format!("a vector as long as `{x}`"),
            expected: x_len,
            actual: y_len,
            at_least: false,
        });
    }
    length(routine, x, x_len)
}

/// Checks that a vector's length fits the libraries' `int`.
pub(crate) fn length(routine: &'static str, argument: &'static str, len: usize) -> Result<usize, BlasError> {
    int(routine, &format!("the length of `{argument}`"), len)?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: &str = "blas::gemm";

    fn call(transa: Op, transb: Op, mnk: [i32; 3], ld: [i32; 3], swap: bool) -> GemmCall {
        let [m, n, k] = mnk;
        let [lda, ldb, ldc] = ld;
        GemmCall { transa, transb, m, n, k, lda, ldb, ldc, swap }
    }

    #[test]
    fn column_major_gemm_passes_through() {
        let g = Gemm::col_major(4, 3, 2);
        assert_eq!(plan_gemm(R, &g, [8, 6, 12]).unwrap(), call(Op::N, Op::N, [4, 3, 2], [4, 2, 4], false));
        let g = Gemm::col_major(4, 3, 2).transpose_a().transpose_b();
        // A stored 2×4 (lda 2), B stored 3×2 (ldb 3).
        assert_eq!(plan_gemm(R, &g, [8, 6, 12]).unwrap(), call(Op::T, Op::T, [4, 3, 2], [2, 3, 4], false));
    }

    #[test]
    fn row_major_gemm_swaps_operands_and_dimensions() {
        // C (4×3) = A (4×2) · B (2×3), row-major: lda 2, ldb 3, ldc 3; the library computes
        // Cᵀ (3×4) = Bᵀ (3×2) · Aᵀ (2×4).
        let g = Gemm::row_major(4, 3, 2);
        assert_eq!(plan_gemm(R, &g, [8, 6, 12]).unwrap(), call(Op::N, Op::N, [3, 4, 2], [3, 2, 3], true));
        // op(A) = Aᵀ with A stored 2×4 (lda 4); op(B) = B: the library's first operand is B
        // untransposed, its second A transposed.
        let g = Gemm::row_major(4, 3, 2).transpose_a();
        assert_eq!(plan_gemm(R, &g, [8, 6, 12]).unwrap(), call(Op::N, Op::T, [3, 4, 2], [3, 4, 3], true));
        // op(B) = Bᵀ with B stored 3×2 (ldb 2).
        let g = Gemm::row_major(4, 3, 2).transpose_b();
        assert_eq!(plan_gemm(R, &g, [8, 6, 12]).unwrap(), call(Op::T, Op::N, [3, 4, 2], [2, 2, 3], true));
        let g = Gemm::row_major(4, 3, 2).transpose_a().transpose_b();
        assert_eq!(plan_gemm(R, &g, [8, 6, 12]).unwrap(), call(Op::T, Op::T, [3, 4, 2], [2, 4, 3], true));
        let plan = plan_gemm(R, &g, [8, 6, 12]).unwrap();
        assert_eq!(plan.operands("a", "b"), ("b", "a"));
    }

    #[test]
    fn explicit_leading_dimensions_accept_longer_slices() {
        // A: rows of 2 in a row pitch of 5: needs (4-1)·5 + 2 = 17 elements, at least.
        let g = Gemm::row_major(4, 3, 2).lda(5).ldc(7);
        let plan = plan_gemm(R, &g, [17, 6, 3 * 7 + 3]).unwrap();
        assert_eq!((plan.lda, plan.ldb, plan.ldc), (3, 5, 7));
        assert!(plan_gemm(R, &g, [20, 6, 24]).is_ok());
        let e = plan_gemm(R, &g, [16, 6, 24]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "blas::gemm: argument `a` (row-major 4×2, lda 5) needs at least 17 elements, got 16"
        );
    }

    #[test]
    fn wrong_lengths_name_the_argument_and_both_counts() {
        let g = Gemm::row_major(4, 3, 2);
        let e = plan_gemm(R, &g, [8, 7, 12]).unwrap_err();
        assert_eq!(e.to_string(), "blas::gemm: argument `b` (row-major 2×3) needs 6 elements, got 7");
        let e = plan_gemm(R, &g.transpose_a(), [8, 6, 11]).unwrap_err();
        assert_eq!(e.to_string(), "blas::gemm: argument `c` (row-major 4×3) needs 12 elements, got 11");
        let e = plan_gemm(R, &Gemm::col_major(4, 3, 2).transpose_b(), [9, 6, 12]).unwrap_err();
        assert!(matches!(e, BlasError::Shape { argument: "a", expected: 8, actual: 9, .. }), "{e}");
    }

    #[test]
    fn small_leading_dimension_is_invalid() {
        let e = plan_gemm(R, &Gemm::col_major(4, 3, 2).lda(3), [100, 6, 12]).unwrap_err();
        assert_eq!(e.to_string(), "blas::gemm: lda = 3 is less than the 4 rows of `a` (column-major 4×2)");
    }

    #[test]
    fn empty_dimensions_need_no_elements() {
        let plan = plan_gemm(R, &Gemm::row_major(0, 3, 2), [0, 6, 0]).unwrap();
        assert_eq!(plan.n, 0);
        // k = 0: C = β·C; leading dimensions stay at least 1, as the libraries require.
        let plan = plan_gemm(R, &Gemm::col_major(4, 3, 0), [0, 0, 12]).unwrap();
        assert_eq!((plan.lda, plan.ldb, plan.ldc), (4, 1, 4));
    }

    #[test]
    fn dimensions_over_i32_are_refused() {
        let n = i32::MAX as usize + 1;
        let e = plan_gemm(R, &Gemm::row_major(1, n, 1).ldb(n), [1, n, n]).unwrap_err();
        assert!(matches!(e, BlasError::InvalidArgument { .. }), "{e}");
        assert!(e.to_string().contains("32-bit"), "{e}");
    }

    #[test]
    fn gemv_plans() {
        const V: &str = "blas::gemv";
        // A 4×3 column-major: y (4) = A x (3).
        assert_eq!(
            plan_gemv(V, &Gemv::col_major(4, 3), [12, 3, 4]).unwrap(),
            GemvCall { trans: Op::N, m: 4, n: 3, lda: 4 }
        );
        // Row-major A (4×3) is Aᵀ (3×4) column-major with ld 3: y = A x becomes y = (Aᵀ)ᵀ x.
        assert_eq!(
            plan_gemv(V, &Gemv::row_major(4, 3), [12, 3, 4]).unwrap(),
            GemvCall { trans: Op::T, m: 3, n: 4, lda: 3 }
        );
        assert_eq!(
            plan_gemv(V, &Gemv::row_major(4, 3).transpose(), [12, 4, 3]).unwrap(),
            GemvCall { trans: Op::N, m: 3, n: 4, lda: 3 }
        );
        let e = plan_gemv(V, &Gemv::row_major(4, 3), [12, 4, 4]).unwrap_err();
        assert!(matches!(e, BlasError::Shape { argument: "x", expected: 3, actual: 4, .. }), "{e}");
        let e = plan_gemv(V, &Gemv::row_major(4, 3).transpose(), [12, 4, 4]).unwrap_err();
        assert!(matches!(e, BlasError::Shape { argument: "y", expected: 3, actual: 4, .. }), "{e}");
        let e = plan_gemv(V, &Gemv::row_major(4, 3), [11, 3, 4]).unwrap_err();
        assert!(matches!(e, BlasError::Shape { argument: "a", expected: 12, actual: 11, .. }), "{e}");
    }

    #[test]
    fn vectors_must_match() {
        assert_eq!(same_length("blas::dot", ("x", 5), ("y", 5)).unwrap(), 5);
        let e = same_length("blas::axpy", ("x", 5), ("y", 4)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "blas::axpy: argument `y` (a vector as long as `x`) needs 5 elements, got 4"
        );
    }
}
