package io.gradsync.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gradsync.sync.DType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything one {@code gradsync bench} run measured: the rows of every backend (or, with
 * {@code --model}, each backend's buckets against one flat buffer), the backends skipped and why,
 * the link bounds, the winner per size, and the all-reduces of other programs given as references
 * with our rows beside them. Written as JSON that follows
 * {@code gradsync-bench.schema.json} (a resource of this module; bump {@link #FORMAT} when the
 * shape changes).
 */
public final class BenchReport {
    public static final String FORMAT = "gradsync-bench/4"; // 2: "models"; 3: "references"; 4: "collective"
    public static final String SCHEMA_RESOURCE = "/gradsync-bench.schema.json";

    /** A backend that could not run here, and why. */
    public record Skipped(String backend, String reason) {
    }

    /** The fastest backend (highest busbw) for one collective, dtype and size, and the type its fp32 gradients crossed as. */
    public record Winner(BenchCollective collective, DType dtype, long bytes, String backend, DType wire, double busbwGBs) {
        /** As {@link SyncMeasurement#label()}. */
        public String label() {
            return backend + (wire == DType.FP32 ? "" : ", " + wire.label() + " wire");
        }
    }

    private final List<SyncMeasurement> rows = new ArrayList<>();
    private final List<Skipped> skipped = new ArrayList<>();
    private final List<LinkBound> bounds = new ArrayList<>();
    private final List<ModelBench.Result> models = new ArrayList<>();
    private final List<AllReduceReference> references = new ArrayList<>();

    /**
     * One of our rows beside the reference's row of the same size: busbw ratio ours / reference
     * (NaN where the reference's busbw is 0), time difference ours - reference in microseconds.
     */
    public record Comparison(SyncMeasurement ours, AllReduceReference.Row reference) {
        public double busbwRatio() {
            return reference.busbwGBs() > 0 ? ours.busbwGBs() / reference.busbwGBs() : Double.NaN;
        }

        public double timeDiffUs() {
            return ours.medianMicros() - reference.timeUs();
        }
    }

    public void add(SyncMeasurement m) {
        rows.add(m);
    }

    public void add(ModelBench.Result m) {
        models.add(m);
    }

    public void skip(String backend, String reason) {
        skipped.add(new Skipped(backend, reason));
    }

    public void addBounds(List<LinkBound> b) {
        bounds.addAll(b);
    }

    public void addReference(AllReduceReference r) {
        references.add(r);
    }

    public List<AllReduceReference> references() {
        return references;
    }

    /**
     * Our rows of the element type and sizes {@code ref} measured too, by dtype and size, backends in
     * the order they ran (a bf16 row beside a float table would compare different work).
     */
    public List<Comparison> compare(AllReduceReference ref) {
        List<Comparison> list = new ArrayList<>();
        for (SyncMeasurement m : rows) {
            AllReduceReference.Row r = m.collective() == BenchCollective.ALL_REDUCE && m.dtype().tableName().equals(ref.type())
                    ? ref.at(m.bytes()) : null;
            if (r != null) {
                list.add(new Comparison(m, r));
            }
        }
        // a stable sort keeps the backends in the order they ran within each dtype and size
        list.sort(Comparator.comparing((Comparison c) -> c.ours().dtype()).thenComparingLong(c -> c.ours().bytes()));
        return list;
    }

    public List<SyncMeasurement> rows() {
        return rows;
    }

    public List<ModelBench.Result> models() {
        return models;
    }

    /** Whether some backend measured anything on devices of {@code runtime}. */
    public boolean measuredOn(String runtime) {
        return rows.stream().anyMatch(m -> m.runtime().equals(runtime)) || models.stream().anyMatch(m -> m.runtime().equals(runtime));
    }

    public boolean isEmpty() {
        return rows.isEmpty() && models.isEmpty();
    }

    public List<Skipped> skipped() {
        return skipped;
    }

    public List<LinkBound> bounds() {
        return bounds;
    }

    /** Per dtype and size, in the order measured, the backend with the highest busbw. */
    public List<Winner> winners() {
        Map<String, Winner> best = new LinkedHashMap<>();
        for (SyncMeasurement m : rows) {
            String key = m.collective() + "/" + m.dtype() + "/" + m.bytes();
            Winner w = best.get(key);
            if (w == null || m.busbwGBs() > w.busbwGBs()) {
                best.put(key, new Winner(m.collective(), m.dtype(), m.bytes(), m.backend().label(), m.wire(), m.busbwGBs()));
            }
        }
        List<Winner> list = new ArrayList<>(best.values());
        list.sort(Comparator.comparing(Winner::collective).thenComparing(Winner::dtype).thenComparingLong(Winner::bytes));
        return list;
    }

    /** The runner-up's busbw for the winner's dtype and size, if another backend (or wire) ran it. */
    public Optional<SyncMeasurement> runnerUp(Winner w) {
        return rows.stream().filter(m -> m.collective() == w.collective() && m.dtype() == w.dtype() && m.bytes() == w.bytes()
                        && !m.label().equals(w.label()))
                .max(Comparator.comparingDouble(SyncMeasurement::busbwGBs));
    }

    /** The whole report as JSON; {@code machine} from {@link MachineInfo}, {@code settings} as the command had them. */
    public ObjectNode toJson(ObjectNode machine, ObjectNode settings) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("format", FORMAT);
        root.put("created", Instant.now().toString());
        root.set("machine", machine);
        root.set("settings", settings);
        ArrayNode results = root.putArray("results");
        for (SyncMeasurement m : rows) {
            ObjectNode r = results.addObject();
            r.put("backend", m.backend().label());
            r.put("collective", m.collective().label());
            r.put("runtime", m.runtime());
            r.put("replicas", m.replicas());
            r.put("bytes", m.bytes());
            r.put("count", m.count());
            r.put("dtype", m.dtype().label());
            r.put("wire", m.wire().label());
            r.put("timing", m.timing());
            r.put("iterations", m.iterations());
            r.put("medianMicros", m.medianMicros());
            r.put("minMicros", m.minMicros());
            r.put("maxMicros", m.maxMicros());
            r.put("spreadPercent", m.spreadPercent());
            r.put("algbwGBs", m.algbwGBs());
            r.put("busbwGBs", m.busbwGBs());
            if (m.wrong() < 0) {
                r.putNull("wrong");
            } else {
                r.put("wrong", m.wrong());
            }
        }
        ArrayNode md = root.putArray("models");
        for (ModelBench.Result m : models) {
            ObjectNode o = md.addObject();
            o.put("backend", m.backend().label());
            o.put("runtime", m.runtime());
            o.put("replicas", m.replicas());
            o.put("dtype", m.dtype().label());
            o.put("model", "mixed");
            o.put("bytes", m.bytes());
            o.put("tensors", m.tensors());
            o.put("largestBytes", m.largestBytes());
            o.put("seed", m.seed());
            o.put("bucketBytes", m.bucketBytes());
            o.put("buckets", m.buckets());
            o.put("paddedBytes", m.paddedBytes());
            o.put("timing", SyncMeasurement.HOST_TIMING);
            o.put("iterations", m.iterations());
            timing(o.putObject("flat"), m, m.flat());
            timing(o.putObject("bucketStep"), m, m.step());
            timing(o.putObject("bucketSync"), m, m.sync());
            if (m.sharded() != null) {
                timing(o.putObject("shardedStep"), m, m.sharded());
                o.put("shardedOverStep", m.shardedOverStep());
            }
            o.put("stepRatio", m.stepRatio());
            o.put("syncRatio", m.syncRatio());
            o.put("goal", ModelBench.GOAL);
            o.put("norm", m.norm());
            if (m.norm()) {
                o.putNull("goalMet");
            } else {
                o.put("goalMet", m.goalMet());
            }
            if (m.wrongFlat() < 0) {
                o.putNull("wrongFlat");
                o.putNull("wrongBuckets");
            } else {
                o.put("wrongFlat", m.wrongFlat());
                o.put("wrongBuckets", m.wrongBuckets());
            }
        }
        ArrayNode sk = root.putArray("skipped");
        for (Skipped s : skipped) {
            sk.addObject().put("backend", s.backend()).put("reason", s.reason());
        }
        ArrayNode bd = root.putArray("bounds");
        for (LinkBound b : bounds) {
            ObjectNode o = bd.addObject();
            o.put("runtime", b.runtime());
            o.put("link", b.name());
            o.put("gbPerSecond", b.gbPerSecond());
            if (Double.isNaN(b.busbwGBs())) {
                o.putNull("busbwGBs");
            } else {
                o.put("busbwGBs", b.busbwGBs());
            }
            o.put("label", b.label());
        }
        ArrayNode win = root.putArray("winners");
        for (Winner w : winners()) {
            win.addObject().put("collective", w.collective().label()).put("dtype", w.dtype().label()).put("bytes", w.bytes()).put("backend", w.backend())
                    .put("wire", w.wire().label()).put("busbwGBs", w.busbwGBs());
        }
        ArrayNode refs = root.putArray("references");
        for (AllReduceReference ref : references) {
            ObjectNode o = refs.addObject();
            o.put("label", ref.label());
            o.put("file", ref.file());
            o.put("type", ref.type());
            ArrayNode rr = o.putArray("rows");
            for (AllReduceReference.Row r : ref.rows()) {
                rr.addObject().put("bytes", r.bytes()).put("timeUs", r.timeUs()).put("busbwGBs", r.busbwGBs());
            }
            ArrayNode cmp = o.putArray("comparison");
            for (Comparison c : compare(ref)) {
                ObjectNode x = cmp.addObject();
                x.put("backend", c.ours().backend().label());
                x.put("runtime", c.ours().runtime());
                x.put("dtype", c.ours().dtype().label());
                x.put("bytes", c.ours().bytes());
                x.put("busbwGBs", c.ours().busbwGBs());
                x.put("referenceBusbwGBs", c.reference().busbwGBs());
                if (Double.isNaN(c.busbwRatio())) {
                    x.putNull("busbwRatio");
                } else {
                    x.put("busbwRatio", c.busbwRatio());
                }
                x.put("timeUs", c.ours().medianMicros());
                x.put("referenceTimeUs", c.reference().timeUs());
                x.put("timeDiffUs", c.timeDiffUs());
            }
        }
        return root;
    }

    private static void timing(ObjectNode o, ModelBench.Result m, Timing t) {
        o.put("medianMicros", t.medianMicros());
        o.put("minMicros", t.minMicros());
        o.put("maxMicros", t.maxMicros());
        o.put("spreadPercent", t.spreadPercent());
        o.put("algbwGBs", m.algbwGBs(t));
        o.put("busbwGBs", m.busbwGBs(t));
    }

    public static void write(ObjectNode json, Path file) {
        try {
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file + ": " + e.getClass().getSimpleName() + " " + e.getMessage(), e);
        }
    }
}
