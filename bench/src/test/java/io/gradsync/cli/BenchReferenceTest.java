package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.gradsync.bench.AllReduceReferenceTest;
import io.gradsync.bench.BenchReport;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gradsync bench --reference} on JVM devices: a torch_allreduce.py log set beside the cpu
 * backend in the table, the JSON (valid against the schema) and the plot; a bad log stops the
 * command before anything is measured.
 */
class BenchReferenceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    private static Path torch;
    private static CliRun run;
    private static JsonNode report;

    @BeforeAll
    static void runBenchAgainstATorchLog() throws Exception {
        torch = Files.writeString(dir.resolve("torch.txt"), AllReduceReferenceTest.TORCH_LOG);
        run = CliRun.of("bench", "--runtime", "jvm", "--devices", "2", "--backend", "cpu", "--sizes", "1M,2M", "--iters", "2",
                "--warmup", "1", "--reference", torch.toString(), "--json", dir.resolve("ref.json").toString(),
                "--plot", dir.resolve("ref.png").toString());
        assertEquals(0, run.exitCode(), run.out() + run.err());
        report = JSON.readTree(dir.resolve("ref.json").toFile());
    }

    @Test
    void againstSectionFollowsTheSummaryWithBothSizes() {
        List<String> lines = run.out().lines().toList();
        int at = lines.indexOf(lines.stream().filter(l -> l.startsWith("# against PyTorch NCCL (")).findFirst()
                .orElseThrow(() -> new AssertionError("no against section in\n" + run.out())));
        assertTrue(lines.get(at + 1).contains("ref busbw") && lines.get(at + 1).contains("ratio"), lines.get(at + 1));
        List<String> rows = lines.subList(at + 3, at + 5);
        for (int i = 0; i < 2; i++) {
            String[] f = rows.get(i).trim().split("\\s+");
            assertEquals(List.of("fp32", i == 0 ? "1M" : "2M", "cpu"), List.of(f[0], f[1], f[2]), rows.get(i));
            assertEquals(i == 0 ? "34.72" : "59.58", f[4], "the reference's per-call busbw: " + rows.get(i));
            assertTrue(f[5].matches("[0-9.]+%") && f[6].matches("[+-][0-9.]+"), rows.get(i));
        }
        assertFalse(lines.get(at + 5).contains(" 4M "), "4M: measured by the reference only");
        int bounds = lines.indexOf(lines.stream().filter(l -> l.startsWith("# link bounds")).findFirst().orElseThrow());
        assertTrue(bounds < at && at < lines.indexOf("# Out of bounds values : 0 OK"), "after the tables and bounds: " + run.out());
    }

    @Test
    void jsonHoldsTheReferenceAndIsValid() throws Exception {
        Schema schema;
        try (InputStream in = BenchReport.class.getResourceAsStream(BenchReport.SCHEMA_RESOURCE)) {
            schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(in);
        }
        List<Error> errors = schema.validate(report);
        assertTrue(errors.isEmpty(), errors.toString());
        assertEquals(BenchReport.FORMAT, report.get("format").asText());
        JsonNode ref = report.get("references").get(0);
        assertEquals("PyTorch NCCL", ref.get("label").asText());
        assertEquals(torch.toString(), ref.get("file").asText());
        assertEquals(3, ref.get("rows").size());
        assertEquals(2, ref.get("comparison").size());
        JsonNode c = ref.get("comparison").get(1);
        assertEquals(2L << 20, c.get("bytes").asLong());
        assertEquals(c.get("timeUs").asDouble() - 52.8, c.get("timeDiffUs").asDouble(), 1e-9);
        assertEquals(c.get("busbwGBs").asDouble() / 59.58, c.get("busbwRatio").asDouble(), 1e-9);
        ObjectNode bad = report.deepCopy();
        ((ObjectNode) bad.get("references").get(0)).remove("comparison");
        assertFalse(schema.validate(bad).isEmpty(), "a reference without its comparison must not pass");
    }

    @Test
    void plotDecodes() throws Exception {
        assertNotNull(ImageIO.read(dir.resolve("ref.png").toFile()));
    }

    @Test
    void aLogWithoutATableIsOneLineNamingItAndNothingRuns(@TempDir Path own) throws Exception {
        Path garbage = Files.writeString(own.resolve("garbage.txt"), "Traceback (most recent call last):\nRuntimeError: NCCL error\n");
        for (String spec : List.of(garbage.toString(), own.resolve("missing.txt") + "=PyTorch")) {
            CliRun r = CliRun.of("bench", "--runtime", "jvm", "--devices", "2", "--backend", "cpu", "--reference", spec,
                    "--json", own.resolve("never.json").toString());
            assertEquals(2, r.exitCode(), r.err());
            List<String> lines = r.err().lines().toList();
            assertEquals(1, lines.size(), r.err());
            assertTrue(lines.getFirst().startsWith("gradsync bench: --reference: "), lines.getFirst());
            assertTrue(lines.getFirst().contains("'" + spec.split("=")[0] + "'"), lines.getFirst());
            assertEquals("", r.out(), "nothing measured");
            assertFalse(Files.exists(own.resolve("never.json")));
        }
        CliRun twice = CliRun.of("bench", "--runtime", "jvm", "--reference", torch.toString(), "--reference", torch.toString());
        assertEquals(2, twice.exitCode(), twice.err());
        assertTrue(twice.err().contains("two references labelled 'PyTorch NCCL'"), twice.err());
        assertEquals("", twice.out());
    }
}
