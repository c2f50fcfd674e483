//! The SVG bar chart of Rust/CUDA time ratios. plotters' SVG backend writes text as SVG
//! `<text>` elements, so no font files are needed.

use super::{kernels, rust_cuda_ratio};
use crate::runner::VariantResult;
use anyhow::{Context, bail};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Draws one bar per kernel that ran in both the `rust` and `cuda` variants (ratio of the
/// average time per repetition; below 1 means Rust is faster), with a line at parity.
/// Fails when no kernel has both.
pub fn write_ratio_svg(path: &Path, results: &[VariantResult], title: &str) -> anyhow::Result<()> {
    let bars: Vec<(&'static str, f64)> =
        kernels(results).into_iter().filter_map(|k| Some((k.name(), rust_cuda_ratio(results, k)?))).collect();
    if bars.is_empty() {
        bail!("no kernel ran in both the rust and cuda variants, so there is no ratio to plot");
    }
    let top = bars.iter().map(|b| b.1).fold(1.0f64, f64::max) * 1.15;
    let width = (120 + 80 * bars.len()).max(640) as u32;
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((0..bars.len()).into_segmented(), 0.0..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc("time per rep, Rust / CUDA")
            .x_labels(bars.len())
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => bars.get(*i).map_or("", |b| b.0).to_owned(),
                _ => String::new(),
            })
            .draw()?;
        chart.draw_series(
            Histogram::vertical(&chart)
                .style(RGBColor(70, 110, 180).filled())
                .margin(12)
                .data(bars.iter().enumerate().map(|(i, b)| (i, b.1))),
        )?;
        chart.draw_series(LineSeries::new(
            [(SegmentValue::Exact(0), 1.0), (SegmentValue::Last, 1.0)],
            RED.stroke_width(2),
        ))?;
        let label = TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
        for (i, (_, ratio)) in bars.iter().enumerate() {
            chart.draw_series(std::iter::once(Text::new(
                format!("{ratio:.2}"),
                (SegmentValue::CenterOf(i), *ratio),
                label.clone(),
            )))?;
        }
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow::anyhow!("{e}")).with_context(|| format!("failed to draw {}", path.display()))
}
