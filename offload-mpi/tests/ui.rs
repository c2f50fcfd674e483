//! Compile-fail tests: what the borrow checker keeps a program from doing with buffers whose
//! parts are in flight. Regenerate the expected output after an intended change with
//! `TRYBUILD=overwrite cargo test -p offload-mpi --test ui`.

#[test]
fn parts_in_flight_cannot_be_touched() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
