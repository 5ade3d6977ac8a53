package io.gradsync.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * A measured link turned into a ceiling on a sync backend's busbw, for plots and JSON.
 *
 * @param runtime     runtime of the devices measured
 * @param name        the link as {@link LinkProbe} names it
 * @param gbPerSecond raw bandwidth of the link
 * @param busbwGBs    the busbw a backend bound by this link could reach, or NaN where no such
 *                    translation is meaningful (then plots draw the raw figure and say so)
 * @param label       what a plot legend shows
 */
public record LinkBound(String runtime, String name, double gbPerSecond, double busbwGBs, String label) {

    /**
     * Bounds from one runtime's links for {@code n} replicas. Host staging moves every replica's
     * bytes down and back up, so with all devices copying at once algbw <= min(D2H all, H2D all)/n
     * (not on JVM devices: there {@code cpu} averages the replicas in place, no staging, and the
     * figure would bound nothing it does); a ring all-reduce puts busbw on each peer link, so the
     * peer link bounds busbw directly.
     */
    public static List<LinkBound> from(String runtime, List<LinkProbe.Link> links, int n) {
        List<LinkBound> bounds = new ArrayList<>();
        double h2dAll = find(links, "H2D all");
        double d2hAll = find(links, "D2H all");
        double busFactor = n <= 1 ? 1 : 2.0 * (n - 1) / n;
        for (LinkProbe.Link l : links) {
            double bus = Double.NaN;
            String label = runtime + " " + l.name() + (l.name().startsWith("D2D") ? " (raw: device memory)" : " (raw)");
            if (l.name().startsWith("peer")) {
                bus = l.gbPerSecond();
                label = runtime + " " + l.name() + " (busbw)";
            }
            bounds.add(new LinkBound(runtime, l.name(), l.gbPerSecond(), bus, label));
        }
        if (!Double.isNaN(h2dAll) && !Double.isNaN(d2hAll) && !runtime.equals(io.gradsync.tasks.device.DeviceRuntime.JVM.label())) {
            double bus = Math.min(h2dAll, d2hAll) / n * busFactor;
            bounds.add(new LinkBound(runtime, "host staging", Math.min(h2dAll, d2hAll), bus,
                    runtime + " host staging bound (busbw)"));
        }
        return bounds;
    }

    /**
     * Whether plots draw it: busbw ceilings only. Raw figures (device memory copy: thousands of
     * GB/s on a GPU) are in the text and the JSON; on the plot they would flatten every curve.
     */
    public boolean drawn() {
        return !Double.isNaN(busbwGBs);
    }

    /** The figure a plot draws: busbw-equivalent where there is one, else the raw bandwidth. */
    public double plotted() {
        return Double.isNaN(busbwGBs) ? gbPerSecond : busbwGBs;
    }

    private static double find(List<LinkProbe.Link> links, String prefix) {
        return links.stream().filter(l -> l.name().startsWith(prefix)).mapToDouble(LinkProbe.Link::gbPerSecond)
                .findFirst().orElse(Double.NaN);
    }
}
