package io.gradsync.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * Prints {@link ModelBench} results: per backend and dtype one row per form in the columns of
 * {@link SyncTable}, plus the bucketed forms' throughput as a share of the flat buffer's and
 * whether that meets the goal.
 */
public final class ModelTable {
    private static final String COLUMNS = "#%12s %12s %8s %8s %9s %10s %13s %8s %8s %8s %7s %7s%n";
    private static final String ROW = " %12s %12d %8d %8d %9s %10.1f %13s %8.2f %8.2f %7.1f%% %7s %7s%n";

    private final PrintStream out;

    public ModelTable(PrintStream out) {
        this.out = out;
    }

    public void print(String title, ModelBench.Result r, String largestName) {
        out.println("# " + title);
        out.printf(Locale.ROOT, "# mixed model (seed %d): %d tensors, %d B per replica, the largest %s of %d elements; "
                        + "%d bucket%s of at most %s, %d B with alignment gaps%n", r.seed(), r.tensors(), r.bytes(), largestName,
                r.largestBytes() / r.dtype().bytes(), r.buckets(), r.buckets() == 1 ? "" : "s", Sizes.format(r.bucketBytes()),
                r.paddedBytes());
        out.printf(Locale.ROOT, COLUMNS, "form", "size", "tensors", "buckets", "type", "time", "spread", "algbw", "busbw",
                "of flat", "goal", "#wrong");
        out.printf(Locale.ROOT, COLUMNS, "", "(B)", "", "", "", "(us)", "(us)", "(GB/s)", "(GB/s)", "", ">=95%", "");
        row("flat", r, r.flat(), 1, 1, "", r.wrongFlat() < 0 ? "N/A" : Long.toString(r.wrongFlat()));
        row("bucket-step", r, r.step(), r.tensors(), r.buckets(), r.verdict(r.stepRatio()),
                r.wrongBuckets() < 0 ? "N/A" : Long.toString(r.wrongBuckets()));
        row("bucket-sync", r, r.sync(), r.tensors(), r.buckets(), r.verdict(r.syncRatio()), "-");
        if (r.sharded() != null) {
            row("sharded-step", r, r.sharded(), r.tensors(), r.buckets(), "-", "-");
            out.printf(Locale.ROOT, "# sharded step (reduce-scatter as backward marks, then the parameters' all-gather): %.3f x the "
                    + "bucket step's time: goal <= 1.02 %s%n", r.shardedOverStep(), r.shardedOverStep() <= 1.02 ? "met" : "MISSED");
            if (r.runtime().equals("jvm")) {
                int n = r.replicas();
                out.printf(Locale.ROOT, "# in host memory, where the average runs in place, a reduce-scatter and an all-gather move "
                        + "(3N-1)/2N = %.3f x its bytes (N = %d): the goal is one for replicas joined by links, where both move "
                        + "the same bytes%n", (3.0 * n - 1) / (2.0 * n), n);
            }
        }
        if (r.norm()) {
            out.printf(Locale.ROOT, "# buckets with the global norm and finite check reach %.1f%% of the flat buffer's throughput "
                    + "(markReady + finish), %.1f%% (synchronize); no goal: the flat buffer only averages%n",
                    100 * r.stepRatio(), 100 * r.syncRatio());
        } else {
            out.printf(Locale.ROOT, "# buckets reach %.1f%% of the flat buffer's throughput (markReady + finish), %.1f%% (synchronize): "
                    + "goal >= 95%% %s%n", 100 * r.stepRatio(), 100 * r.syncRatio(), r.verdict(r.stepRatio()));
        }
        out.flush();
    }

    private void row(String form, ModelBench.Result r, Timing t, int tensors, int buckets, String goal, String wrong) {
        double share = r.flat().medianMicros() / t.medianMicros();
        out.printf(Locale.ROOT, ROW, form, r.bytes(), tensors, buckets, r.dtype().tableName(), t.medianMicros(),
                String.format(Locale.ROOT, "%.0f-%.0f", t.minMicros(), t.maxMicros()), r.algbwGBs(t), r.busbwGBs(t),
                100 * share, goal.isEmpty() ? "-" : goal, wrong);
    }

    /** One line per backend and dtype, when there are several to compare. */
    public void summary(List<ModelBench.Result> results) {
        if (results.size() < 2) {
            return;
        }
        out.println(results.getFirst().norm()
                ? "# summary: buckets (markReady + finish) with the global norm against one flat buffer of the same size (averaging only)"
                : "# summary: buckets (markReady + finish) against one flat buffer of the same size; goal >= 95%");
        out.printf(Locale.ROOT, "#%9s %9s %12s %8s %12s %12s %9s %7s%n", "backend", "type", "size", "buckets",
                "flat busbw", "step busbw", "of flat", "goal");
        for (ModelBench.Result r : results) {
            out.printf(Locale.ROOT, " %9s %9s %12s %8d %12.2f %12.2f %8.1f%% %7s%n", r.backend().label(), r.dtype().label(),
                    Sizes.format(r.bytes()), r.buckets(), r.busbwGBs(r.flat()), r.busbwGBs(r.step()), 100 * r.stepRatio(),
                    r.verdict(r.stepRatio()));
        }
    }
}
