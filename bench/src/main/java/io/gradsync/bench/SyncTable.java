package io.gradsync.bench;

import java.io.PrintStream;
import java.util.Locale;

/** Prints measurements in the table layout of nccl-tests, which every GPU engineer reads at a glance. */
public final class SyncTable {
    private final PrintStream out;

    public SyncTable(PrintStream out) {
        this.out = out;
    }

    public void header(String title) {
        out.println("# " + title);
        out.printf(Locale.ROOT, "#%12s %12s %9s %6s %10s %13s %8s %8s %7s%n",
                "size", "count", "type", "redop", "time", "spread", "algbw", "busbw", "#wrong");
        out.printf(Locale.ROOT, "#%12s %12s %9s %6s %10s %13s %8s %8s %7s%n",
                "(B)", "(elements)", "", "", "(us)", "(us)", "(GB/s)", "(GB/s)", "");
    }

    public void row(SyncMeasurement m) {
        out.printf(Locale.ROOT, " %12d %12d %9s %6s %10.1f %13s %8.2f %8.2f %7s%n",
                m.bytes(), m.count(), m.dtype().tableName(), m.collective().redop(), m.medianMicros(),
                String.format(Locale.ROOT, "%.0f-%.0f", m.minMicros(), m.maxMicros()),
                m.algbwGBs(), m.busbwGBs(), m.wrong() < 0 ? "N/A" : Long.toString(m.wrong()));
        out.flush();
    }
}
