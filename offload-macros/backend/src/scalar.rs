//! `#[derive(KernelScalar)]`: a plain-data struct as a kernel parameter, with the layout
//! checks that make passing it to the GPU sound.

use quote::quote;
use syn::spanned::Spanned;

/// Expands the derive on `item`.
pub fn derive(item: syn::DeriveInput) -> syn::Result<proc_macro2::TokenStream> {
    let syn::Data::Struct(data) = &item.data else {
        return Err(syn::Error::new(
            item.ident.span(),
            "`KernelScalar` can be derived for structs only: enums and unions have no layout the GPU can share",
        ));
    };
    let repr_c = item.attrs.iter().filter(|a| a.path().is_ident("repr")).any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|m| {
            found |= m.path.is_ident("C") || m.path.is_ident("transparent");
            Ok(())
        });
        found
    });
    if !repr_c {
        return Err(syn::Error::new(
            item.ident.span(),
            "a struct passed to kernels needs `#[repr(C)]`, so that the host and the GPU lay it out alike\n  \
             help: add `#[repr(C)]` above the struct",
        ));
    }
    if !item.generics.params.is_empty() {
        return Err(syn::Error::new(item.generics.span(), "kernel parameter structs cannot be generic"));
    }
    let name = &item.ident;
    let field_checks = data.fields.iter().map(|f| {
        let ty = &f.ty;
        quote::quote_spanned!(ty.span()=> ::offload::__private::assert_kernel_scalar::<#ty>();)
    });
    Ok(quote! {
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        const _: () = {
            // Every field must itself be plain data, checked at the field's type.
            fn fields_are_plain_data() {
                #(#field_checks)*
            }
            // SAFETY: `#[repr(C)]` fixes the layout on host and GPU alike, the struct is `Copy`
            // (required by the trait) and every field is `KernelScalar` (checked above), so its
            // bytes carry no pointer and all-zero bytes are a valid value.
            unsafe impl ::offload::__private::KernelScalar for #name {}
        };
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn needs_repr_c_and_a_struct() {
        let plain: syn::DeriveInput = parse_quote! { struct P { a: f32 } };
        assert!(derive(plain).unwrap_err().to_string().contains("#[repr(C)]"));
        let e: syn::DeriveInput = parse_quote! { #[repr(C)] enum E { A } };
        assert!(derive(e).is_err());
        let ok: syn::DeriveInput =
            parse_quote! { #[derive(Clone, Copy)] #[repr(C)] struct P { a: f32, n: u32 } };
        let out = derive(ok).unwrap().to_string();
        assert!(out.contains("unsafe impl :: offload :: __private :: KernelScalar for P"), "{out}");
        assert_eq!(out.matches("assert_kernel_scalar").count(), 2);
    }
}
