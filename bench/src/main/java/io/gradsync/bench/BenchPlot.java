package io.gradsync.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.Marker;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * busbw against size, one line per backend (and dtype when several were run), both axes log-scale, measured link bounds as labelled dashed horizontal lines, each reference (another program's
 * all-reduce, {@code --reference}) dotted with a marker of its own. Drawn headless with XChart.
 */
public final class BenchPlot {
    private BenchPlot() {
    }

    static double log2(long bytes) {
        return Math.log(bytes) / Math.log(2);
    }

    /** A tick at log2(bytes): the size where it is a whole power of two, else no label. */
    static String sizeLabel(double log2) {
        long exponent = Math.round(log2);
        return Math.abs(log2 - exponent) < 1e-6 && exponent >= 0 && exponent < 63 ? Sizes.format(1L << exponent) : "";
    }

    public static void write(BenchReport report, String title, Path file) {
        // No display on GPU nodes and CI: AWT must not look for one.
        System.setProperty("java.awt.headless", "true");
        if (report.rows().isEmpty()) {
            throw new IllegalArgumentException("nothing to plot: no backend produced a measurement");
        }
        XYChart chart = new XYChartBuilder().width(1100).height(700).title(title)
                .xAxisTitle("size per replica (log scale)").yAxisTitle("busbw (GB/s, log scale)").build();
        // Log scale as log2(bytes) on a linear axis: XChart's own log axis labels only decades,
        // which leaves a 256K..4M sweep with one label; here every power of two is named (1M, 2M, ...).
        chart.getStyler().setxAxisTickLabelsFormattingFunction(BenchPlot::sizeLabel);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotGridLinesVisible(true);
        // Log busbw too: host staging (tens of GB/s) and small sizes would lie flat on a linear axis under NVLink's hundreds.
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmicDecadeOnly(false); // label 2..9 x 10^n too, not only the decades

        boolean severalTypes = report.rows().stream().map(SyncMeasurement::dtype).distinct().count() > 1;
        boolean severalCollectives = report.rows().stream().map(SyncMeasurement::collective).distinct().count() > 1;
        Map<String, List<SyncMeasurement>> lines = new LinkedHashMap<>();
        for (SyncMeasurement m : report.rows()) {
            String name = (severalCollectives ? m.collective().label() + ", " : "") + m.label() + " (" + m.runtime() + ")"
                    + (severalTypes ? " " + m.dtype().label() : "");
            lines.computeIfAbsent(name, k -> new ArrayList<>()).add(m);
        }
        double minX = Double.MAX_VALUE;
        double maxX = 0;
        for (var e : lines.entrySet()) {
            List<SyncMeasurement> ms = new ArrayList<>(e.getValue().stream().filter(m -> m.busbwGBs() > 0).toList());
            if (ms.isEmpty()) {
                continue;
            }
            ms.sort((a, b) -> Long.compare(a.bytes(), b.bytes()));
            double[] x = ms.stream().mapToDouble(m -> log2(m.bytes())).toArray();
            double[] y = ms.stream().mapToDouble(SyncMeasurement::busbwGBs).toArray();
            minX = Math.min(minX, x[0]);
            maxX = Math.max(maxX, x[x.length - 1]);
            XYSeries series = chart.addSeries(e.getKey(), x, y);
            series.setMarker(SeriesMarkers.CIRCLE);
        }
        // Dotted and with markers our lines never use, so a reference reads as "not ours" even in grey print.
        BasicStroke dotted = new BasicStroke(2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND, 10f, new float[] {1f, 5f}, 0f);
        Marker[] markers = {SeriesMarkers.DIAMOND, SeriesMarkers.SQUARE, SeriesMarkers.TRIANGLE_UP, SeriesMarkers.CROSS,
            SeriesMarkers.TRIANGLE_DOWN, SeriesMarkers.PLUS};
        int k = 0;
        for (AllReduceReference ref : report.references()) {
            List<AllReduceReference.Row> rs = new ArrayList<>(ref.rows().stream().filter(r -> r.busbwGBs() > 0).toList());
            if (rs.isEmpty()) {
                continue;
            }
            rs.sort((a, b) -> Long.compare(a.bytes(), b.bytes()));
            double[] x = rs.stream().mapToDouble(r -> log2(r.bytes())).toArray();
            double[] y = rs.stream().mapToDouble(AllReduceReference.Row::busbwGBs).toArray();
            minX = Math.min(minX, x[0]);
            maxX = Math.max(maxX, x[x.length - 1]);
            XYSeries series = chart.addSeries(ref.label() + " (reference)", x, y);
            series.setMarker(markers[k++ % markers.length]);
            series.setLineStyle(dotted);
        }
        if (minX > maxX) {
            throw new IllegalArgumentException("nothing to plot: no measurement has a busbw above zero");
        }
        if (minX == maxX) { // one size: widen so the bound lines have length
            minX -= 1;
            maxX += 1;
        }
        BasicStroke dashed = new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f);
        for (LinkBound b : report.bounds()) {
            // single copies are folded into the host staging bound; only ceilings on busbw are drawn
            if (!b.drawn() || !(b.plotted() > 0) || Double.isInfinite(b.plotted())) {
                continue;
            }
            XYSeries line = chart.addSeries(b.label() + String.format(java.util.Locale.ROOT, " %.1f GB/s", b.plotted()),
                    new double[] {minX, maxX}, new double[] {b.plotted(), b.plotted()});
            line.setMarker(SeriesMarkers.NONE);
            line.setLineStyle(dashed);
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try (OutputStream out = Files.newOutputStream(file)) {
                BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file + ": " + e.getClass().getSimpleName() + " " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            if (String.valueOf(e.getMessage()).contains("Fontconfig")) { // the JDK's words for "no fonts on this machine"
                throw new IllegalStateException("cannot draw " + file + ": Java finds no fonts on this machine"
                        + " (install fonts-dejavu-core, or run from a bundle made by scripts/make-gpu-bundle, which carries its own)", e);
            }
            throw e;
        }
    }
}
