//! Compile-fail tests: every safety promise of the kernel language is a program that must not
//! compile, with the message users see. Regenerate the expected output after an intended
//! change with `TRYBUILD=overwrite cargo test -p offload-tests --test ui`.

#[test]
fn kernel_language_rejects_unsound_programs() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
