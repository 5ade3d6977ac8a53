package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.gradsync.bench.BenchReport;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.DeviceRuntime;
import java.awt.image.BufferedImage;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.StreamSupport;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gradsync bench} on JVM devices end to end: its JSON follows the schema kept in the repo,
 * its PNG decodes to a real chart, every backend asked for is either measured or skipped with a
 * reason; {@code --model mixed} prints buckets against one flat buffer and writes them as "models".
 */
class BenchOutputTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Schema schema;

    @TempDir
    static Path dir;
    private static CliRun run;
    private static JsonNode report;
    private static CliRun modelRun;
    private static JsonNode modelReport;

    @BeforeAll
    static void runBenchOnce() throws Exception {
        try (InputStream in = BenchReport.class.getResourceAsStream(BenchReport.SCHEMA_RESOURCE)) {
            assertNotNull(in, "schema resource " + BenchReport.SCHEMA_RESOURCE);
            schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(in);
        }
        java.nio.file.Files.createDirectories(dir.resolve("out")); // bench writes into folders that exist, and creates none
        run = CliRun.of("bench", "--backend", "cpu,ptx,nccl", "--runtime", "jvm", "--devices", "2",
                "--sizes", "64K,256K", "--dtype", "fp32,bf16", "--warmup", "1", "--iters", "3",
                "--json", dir.resolve("out/bench.json").toString(), "--plot", dir.resolve("out/bench.png").toString());
        assertEquals(0, run.exitCode(), run.out() + run.err());
        report = JSON.readTree(dir.resolve("out/bench.json").toFile());
        modelRun = CliRun.of("bench", "--runtime", "jvm", "--devices", "3", "--model", "mixed", "--model-size", "4M",
                "--tensors", "50", "--iters", "2", "--json", dir.resolve("out/model.json").toString());
        assertEquals(0, modelRun.exitCode(), modelRun.out() + modelRun.err());
        modelReport = JSON.readTree(dir.resolve("out/model.json").toFile());
    }

    @Test
    void jsonIsValidAgainstItsSchema() {
        List<Error> errors = schema.validate(report);
        assertTrue(errors.isEmpty(), errors.toString());
    }

    @Test
    void modelModePrintsBucketsAgainstOneFlatBuffer() {
        String out = modelRun.out();
        assertTrue(out.contains("# backend cpu (auto), 3 x jvm"), out);
        assertTrue(out.contains("# mixed model (seed 1): 50 tensors, 4194304 B per replica, the largest embedding.weight"), out);
        for (String form : List.of("flat", "bucket-step", "bucket-sync")) {
            assertTrue(out.lines().anyMatch(l -> l.trim().startsWith(form + " ") && l.contains(" 4194304 ")), form + " row in\n" + out);
        }
        assertTrue(out.contains("of flat") && out.contains("goal"), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("# buckets reach [0-9.]+% of the flat buffer's throughput .*goal >= 95% (met|MISSED)")), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("# sharded step .*: [0-9.]+ x the bucket step's time: goal <= 1.02 (met|MISSED)")), out);
        // 3 replicas in host memory: reduce-scatter 3 reads + 1 write, all-gather 2 + 2, the average 3 + 3: 8/6
        assertTrue(out.contains("move (3N-1)/2N = 1.333 x its bytes (N = 3)"), out);
        assertTrue(out.contains("# Out of bounds values : 0 OK"), out);
    }

    /**
     * Several wires: each averaging collective of fp32 gradients timed once per wire, the copies and
     * 16-bit gradients once, every row saying its wire in the JSON, and the speed-up over the first
     * wire printed per backend and size.
     */
    @Test
    void severalWiresAreTimedSideBySide(@TempDir Path out) throws Exception {
        CliRun r = CliRun.of("bench", "--runtime", "jvm", "--backend", "cpu", "--devices", "2", "--sizes", "64K,256K",
                "--dtype", "fp32,bf16", "--collective", "all-reduce,all-gather", "--wire", "fp32,bf16", "--iters", "2",
                "--no-bounds", "--json", out.resolve("wires.json").toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        JsonNode json = JSON.readTree(out.resolve("wires.json").toFile());
        assertTrue(schema.validate(json).isEmpty(), schema.validate(json).toString());
        List<String> rows = new java.util.ArrayList<>();
        json.get("results").forEach(m -> rows.add(m.get("dtype").asText() + " " + m.get("collective").asText() + " " + m.get("wire").asText()));
        assertEquals(List.of("fp32 all-reduce fp32", "fp32 all-reduce fp32", "fp32 all-gather fp32", "fp32 all-gather fp32",
                "bf16 all-reduce fp32", "bf16 all-reduce fp32", "bf16 all-gather fp32", "bf16 all-gather fp32",
                "fp32 all-reduce bf16", "fp32 all-reduce bf16"), rows, "the wire only where it carries something");
        assertTrue(r.out().contains("# wire speed-up: the time with the fp32 wire / the time with this one"), r.out());
        assertEquals(2, r.out().lines().filter(l -> l.matches("\\s+all-reduce cpu\\s+(64K|256K) bf16\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9.]+x")).count(),
                r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\s+all-reduce\\s+fp32\\s+64K cpu\\s+.*cpu, bf16 wire.*")), r.out());
        CliRun twice = CliRun.of("bench", "--runtime", "jvm", "--wire", "bf16,bf16");
        assertEquals(2, twice.exitCode());
        assertTrue(twice.err().contains("--wire: bf16 twice"), twice.err());
    }

    /** With --norm the step also computes the global norm: its share of flat is shown, without the goal (about averaging alone). */
    @Test
    void modelModeWithTheNormShowsItsCostWithoutAGoal(@TempDir Path out) throws Exception {
        CliRun r = CliRun.of("bench", "--runtime", "jvm", "--devices", "2", "--model", "mixed", "--model-size", "1M",
                "--tensors", "40", "--iters", "2", "--norm", "--json", out.resolve("norm.json").toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("# buckets with the global norm and finite check reach [0-9.]+% of the flat "
                + "buffer's throughput .*no goal: the flat buffer only averages")), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("bucket-step ") && l.matches(".*%\\s+-\\s+\\d+$")),
                "no verdict in the goal column:\n" + r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("# sharded step .*: [0-9.]+ x the bucket step's time: .*")),
                "the sharded step with the norm too:\n" + r.out());
        JsonNode report = JSON.readTree(out.resolve("norm.json").toFile());
        assertTrue(schema.validate(report).isEmpty(), schema.validate(report).toString());
        assertTrue(report.get("settings").get("model").get("norm").asBoolean());
        JsonNode m = report.get("models").get(0);
        assertTrue(m.get("norm").asBoolean());
        assertTrue(m.get("goalMet").isNull());
    }

    @Test
    void modelJsonIsValidAndHoldsTheComparison() {
        List<Error> errors = schema.validate(modelReport);
        assertTrue(errors.isEmpty(), errors.toString());
        assertEquals(0, modelReport.get("results").size(), "no size sweep with --model");
        assertFalse(modelReport.get("settings").get("model").get("norm").asBoolean());
        assertEquals(0, report.get("models").size(), "no model in a size sweep");
        assertEquals(1, modelReport.get("models").size());
        JsonNode m = modelReport.get("models").get(0);
        assertEquals("cpu", m.get("backend").asText());
        assertEquals(3, m.get("replicas").asInt());
        assertEquals(4L << 20, m.get("bytes").asLong());
        assertEquals(50, m.get("tensors").asInt());
        assertEquals(25L << 20, m.get("bucketBytes").asLong());
        assertTrue(m.get("paddedBytes").asLong() >= m.get("bytes").asLong());
        assertEquals(0, m.get("wrongFlat").asLong());
        assertEquals(0, m.get("wrongBuckets").asLong());
        double ratio = m.get("flat").get("medianMicros").asDouble() / m.get("bucketStep").get("medianMicros").asDouble();
        assertEquals(ratio, m.get("stepRatio").asDouble(), 1e-9);
        assertEquals(ratio >= 0.95, m.get("goalMet").asBoolean());
        assertEquals("mixed", modelReport.get("settings").get("model").get("name").asText());
        assertEquals(List.of(4L << 20), List.of(modelReport.get("settings").get("sizes").get(0).asLong()));
    }

    @Test
    void schemaRejectsABadModelRow() {
        ObjectNode noFlat = modelReport.deepCopy();
        ((ObjectNode) noFlat.get("models").get(0)).remove("flat");
        assertFalse(schema.validate(noFlat).isEmpty(), "a model row without the flat timing must not pass");
        ObjectNode badRatio = modelReport.deepCopy();
        ((ObjectNode) badRatio.get("models").get(0)).put("stepRatio", -0.5);
        assertFalse(schema.validate(badRatio).isEmpty(), "a negative ratio must not pass");
        ObjectNode noModels = report.deepCopy();
        noModels.remove("models");
        assertFalse(schema.validate(noModels).isEmpty(), "format 2 always has models");
    }

    @Test
    void schemaRejectsAReportWithoutMachineOrWithABadRow() {
        ObjectNode noMachine = report.deepCopy();
        noMachine.remove("machine");
        assertFalse(schema.validate(noMachine).isEmpty(), "a report without the machine must not pass");
        ObjectNode badRow = report.deepCopy();
        ((ObjectNode) badRow.get("results").get(0)).put("busbwGBs", -1.0);
        assertFalse(schema.validate(badRow).isEmpty(), "a negative busbw must not pass");
    }

    @Test
    void everyRequestedBackendIsMeasuredOrSkippedWithAReason() {
        Set<String> seen = new HashSet<>();
        report.get("results").forEach(r -> seen.add(r.get("backend").asText()));
        report.get("skipped").forEach(s -> {
            seen.add(s.get("backend").asText());
            assertFalse(s.get("reason").asText().isBlank());
            assertTrue(run.out().contains("# " + s.get("backend").asText() + ": skipped: "), run.out());
        });
        assertEquals(Set.of("cpu", "ptx", "nccl"), seen);
        // cpu runs anywhere: 2 sizes x 2 dtypes, checked against the float64 average
        List<JsonNode> cpu = StreamSupport.stream(report.get("results").spliterator(), false)
                .filter(r -> r.get("backend").asText().equals("cpu")).toList();
        assertEquals(4, cpu.size());
        cpu.forEach(r -> {
            assertEquals(0, r.get("wrong").asLong());
            assertEquals(2, r.get("replicas").asInt());
            assertEquals("jvm", r.get("runtime").asText());
        });
        assertEquals(4, report.get("winners").size(), "one winner per dtype and size");
        assertTrue(report.get("machine").get("devices").size() >= 2);
        assertTrue(report.get("bounds").size() > 0, "link bounds measured unless --no-bounds");
    }

    @Test
    void pngDecodesToAChartWithContent() throws Exception {
        Path png = dir.resolve("out/bench.png");
        BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, "ImageIO decodes " + png);
        assertTrue(image.getWidth() >= 800 && image.getHeight() >= 500, image.getWidth() + "x" + image.getHeight());
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y += 3) {
            for (int x = 0; x < image.getWidth(); x += 3) {
                colours.add(image.getRGB(x, y));
            }
        }
        assertTrue(colours.size() > 20, "a drawn chart has lines, text and legend colours, got " + colours.size());
        assertTrue(Files.size(png) > 10_000);
    }

    @Test
    void allRunsJvmAndPoclBackendsSideBySide(@TempDir Path own) throws Exception {
        assumeTrue(DeviceCatalog.status(DeviceRuntime.OPENCL).available(), "no OpenCL (PoCL) here");
        CliRun all = CliRun.of("bench", "--backend", "all", "--devices", "2", "--sizes", "64K,128K", "--warmup", "1",
                "--iters", "2", "--no-bounds", "--json", own.resolve("all.json").toString(), "--plot", own.resolve("all.png").toString());
        assertEquals(0, all.exitCode(), all.out() + all.err());
        JsonNode json = JSON.readTree(own.resolve("all.json").toFile());
        assertTrue(schema.validate(json).isEmpty(), schema.validate(json).toString());
        Set<String> ran = new HashSet<>();
        json.get("results").forEach(r -> ran.add(r.get("backend").asText() + "@" + r.get("runtime").asText()));
        boolean cuda = DeviceCatalog.status(DeviceRuntime.CUDA).available();
        assertTrue(ran.contains(cuda ? "cpu@cuda" : "cpu@jvm"), ran.toString());
        assertTrue(ran.contains("opencl@opencl"), "opencl on OpenCL devices beside cpu: " + ran + "\n" + all.out());
        assertTrue(all.out().contains("# summary: fastest backend per collective and size"), all.out());
        assertNotNull(ImageIO.read(own.resolve("all.png").toFile()));
    }

    /** Every collective gets its own checked table, its busbw by nccl-tests' factor for it, and its rows in the JSON. */
    @Test
    void everyCollectiveIsTimedCheckedAndWritten(@TempDir Path own) throws Exception {
        CliRun all = CliRun.of("bench", "--backend", "cpu", "--runtime", "jvm", "--devices", "3", "--sizes", "64K", "--warmup", "1",
                "--iters", "2", "--no-bounds", "--collective", "all", "--json", own.resolve("c.json").toString(),
                "--plot", own.resolve("c.png").toString());
        assertEquals(0, all.exitCode(), all.out() + all.err());
        for (String c : List.of("reduce-scatter", "all-gather", "broadcast")) {
            assertTrue(all.out().contains(", " + c + "\n") || all.out().contains(", " + c + System.lineSeparator()), c + ": " + all.out());
        }
        assertTrue(all.out().contains("# Out of bounds values : 0 OK"), all.out());
        JsonNode json = JSON.readTree(own.resolve("c.json").toFile());
        assertTrue(schema.validate(json).isEmpty(), schema.validate(json).toString());
        Map<String, Double> factor = new HashMap<>();
        json.get("results").forEach(r -> factor.put(r.get("collective").asText(), r.get("busbwGBs").asDouble() / r.get("algbwGBs").asDouble()));
        assertEquals(Set.of("all-reduce", "reduce-scatter", "all-gather", "broadcast"), factor.keySet());
        assertEquals(4.0 / 3, factor.get("all-reduce"), 1e-9);
        assertEquals(2.0 / 3, factor.get("reduce-scatter"), 1e-9);
        assertEquals(2.0 / 3, factor.get("all-gather"), 1e-9);
        assertEquals(1.0, factor.get("broadcast"), 1e-9);
        assertNotNull(ImageIO.read(own.resolve("c.png").toFile()), "one line per collective and backend");
    }

    /** fp32 on a bf16 wire: checked against the wire's roundings (0 wrong), the title says so. */
    @Test
    void aBf16WireIsTimedAndChecked(@TempDir Path own) throws Exception {
        CliRun r = CliRun.of("bench", "--backend", "cpu", "--runtime", "jvm", "--devices", "2", "--sizes", "64K", "--warmup", "1",
                "--iters", "2", "--no-bounds", "--wire", "bf16", "--collective", "all-reduce,reduce-scatter", "--json",
                own.resolve("w.json").toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("bf16 wire, fp32"), r.out());
        assertTrue(r.out().contains("# Out of bounds values : 0 OK"), r.out());
        JsonNode json = JSON.readTree(own.resolve("w.json").toFile());
        assertTrue(schema.validate(json).isEmpty(), schema.validate(json).toString());
        assertEquals("bf16", json.get("settings").get("wire").asText());
        CliRun bad = CliRun.of("bench", "--backend", "cpu", "--wire", "int8");
        assertEquals(2, bad.exitCode(), bad.out() + bad.err());
        assertTrue(bad.err().contains("--wire"), bad.err());
    }

    @Test
    void anUnknownCollectiveIsAUsageError() {
        CliRun bad = CliRun.of("bench", "--backend", "cpu", "--collective", "all-to-all");
        assertEquals(2, bad.exitCode(), bad.out() + bad.err());
        assertTrue(bad.err().contains("unknown collective 'all-to-all'; valid: all-reduce, reduce-scatter, all-gather, broadcast"), bad.err());
    }

    @Test
    void tablesAndFilesAreAnnounced() {
        assertTrue(run.out().contains("#wrong"), run.out());
        assertTrue(run.out().contains("# wrote " + dir.resolve("out/bench.json")), run.out());
        assertTrue(run.out().contains("# Out of bounds values : 0 OK"), run.out());
    }
}
