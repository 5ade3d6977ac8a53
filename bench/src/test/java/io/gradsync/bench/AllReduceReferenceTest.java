package io.gradsync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.SyncBackend;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --reference's parser: the first nccl-tests style table of a log, and our rows set beside it. */
public class AllReduceReferenceTest {

    /**
     * A log as scripts/gpu-node-speed keeps it (bench/scripts/torch_allreduce.py on 4 GPUs): the
     * other ranks' warnings in between, and a second run's table after it that must not count.
     */
    public static final String TORCH_LOG = """
            === torch: python3 /opt/bundle/torch_allreduce.py --gpus 4 --sizes 1M,2M,4M,16M
            # torch 2.5.1+cu124, NCCL 2.21.5, 4 x NVIDIA H200, warmup 5, iters 20, NCCL_NVLS_ENABLE=0
            # torch.distributed all_reduce(op=AVG), fp32, one process per GPU
            #        size        count      type  redop   per-call     spread    algbw    busbw  pipelined    algbw    busbw  #wrong
            #         (B)   (elements)                        (us)       (us)   (GB/s)   (GB/s)       (us)   (GB/s)   (GB/s)
            [rank 1] 1048576 262144 float avg 1.0 1-1 999.00 999.00 1.0 999.00 999.00 0
                  1048576       262144     float    avg       45.3      41-80    23.15    34.72       27.1    38.69    58.04       0
            [rank1]:[W1009 12:00:01.000 ProcessGroupNCCL.cpp:4115] Warning: barrier() using device under current context
                  2097152       524288     float    avg       52.8      49-91    39.72    59.58       33.0    63.55    95.33       0
            [rank 3] NCCL INFO comm 0x55 rank 3 nranks 4 - Init COMPLETE
                  4194304      1048576     float    avg       61.9      58-97    67.76   101.64       41.6   100.82   151.24       0
                  1048576       262144     float    avg       99.9      90-99    10.50    15.74       88.8    11.81    17.71       0
            #        size        count      type  redop   per-call     spread    algbw    busbw  pipelined    algbw    busbw  #wrong
                  1048576       262144     float    avg       11.1      10-12    94.47   141.70       10.0   104.86   157.29       0
                 16777216      4194304     float    avg      121.4    117-160   138.20   207.30      102.3   164.00   246.00       0
            """;

    @Test
    void torchLogGivesItsFirstTablesPerCallColumns() {
        AllReduceReference ref = AllReduceReference.of("logs/torch.txt", null, TORCH_LOG.lines().toList());
        assertEquals(AllReduceReference.TORCH_LABEL, ref.label(), "a torch_allreduce.py log is PyTorch's");
        assertEquals("logs/torch.txt", ref.file());
        assertEquals("float", ref.type());
        // the first row of a size counts; 16M is in the second table only; [rank lines are never rows
        assertEquals(List.of(new AllReduceReference.Row(1L << 20, 45.3, 34.72), new AllReduceReference.Row(2L << 20, 52.8, 59.58),
                new AllReduceReference.Row(4L << 20, 61.9, 101.64)), ref.rows());
        assertNull(ref.at(16L << 20));
    }

    @Test
    void labelFromTheCommandLineElseTheFileNameAndNcclTestsRootColumn(@TempDir Path dir) throws Exception {
        Path torch = Files.writeString(dir.resolve("torch.txt"), TORCH_LOG);
        assertEquals("mine", AllReduceReference.parse(torch + "=mine").label());
        assertEquals(torch.toString(), AllReduceReference.parse(torch + "=mine").file());
        assertEquals(AllReduceReference.TORCH_LABEL, AllReduceReference.parse(torch + "=").label());
        // a path with '=' in it is still a path
        Path odd = Files.writeString(dir.resolve("lr=0.1.txt"), TORCH_LOG);
        assertEquals(odd.toString(), AllReduceReference.parse(odd.toString()).file());
        // nccl-tests' all_reduce_perf: a root column after redop, out-of-place time and busbw first
        Path nccl = Files.writeString(dir.resolve("nccl-tests.log"), """
                #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
                #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
                     1048576        262144     float     sum      -1    30.12   34.81   52.22      0    29.90   35.07   52.60      0
                    16777216       4194304     float     sum      -1    101.8  164.80  247.21      0    100.9  166.28  249.42      0
                """);
        AllReduceReference n = AllReduceReference.parse(nccl.toString());
        assertEquals("nccl-tests.log", n.label());
        assertEquals(List.of(new AllReduceReference.Row(1L << 20, 30.12, 52.22), new AllReduceReference.Row(16L << 20, 101.8, 247.21)),
                n.rows());
        // nccl-tests 2.10 and earlier: no root column, an error column after busbw (a number, or N/A without validation)
        for (String error : new String[] {"2e-06", "0e+00", "N/A"}) {
            Path old = Files.writeString(dir.resolve("nccl-2.10-" + error.replace('/', '_') + ".log"), """
                    #       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error
                    #        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
                         1048576        262144     float     sum    50.00   20.97   20.97  E    49.00   21.40   21.40  E
                         4194304       1048576     float     sum    80.00   52.43   52.43  E    79.00   53.09   53.09  E
                    """.replace("E", error));
            assertEquals(List.of(new AllReduceReference.Row(1L << 20, 50.0, 20.97), new AllReduceReference.Row(4L << 20, 80.0, 52.43)),
                    AllReduceReference.parse(old.toString()).rows(), error);
        }
    }

    @Test
    void garbageOrAMissingFileIsAnErrorNamingIt(@TempDir Path dir) throws Exception {
        Path garbage = dir.resolve("garbage.txt");
        Files.write(garbage, "not a table\n# size count\n12 apples avg 3\n\u0000\u00ff\u00fe binary\n".getBytes(StandardCharsets.ISO_8859_1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AllReduceReference.parse(garbage.toString()));
        assertTrue(e.getMessage().contains("no nccl-tests style table in '" + garbage + "'"), e.getMessage());
        Path missing = dir.resolve("missing.txt");
        e = assertThrows(IllegalArgumentException.class, () -> AllReduceReference.parse(missing + "=PyTorch"));
        assertEquals("cannot read '" + missing + "': no such file", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AllReduceReference.parse(dir.toString()));
        assertTrue(e.getMessage().startsWith("cannot read '" + dir + "'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> AllReduceReference.parse("=label"));
    }

    @Test
    void reportSetsOurRowsOfTheSameSizesBesideIt() {
        AllReduceReference ref = AllReduceReference.of("torch.txt", null, TORCH_LOG.lines().toList());
        BenchReport r = new BenchReport();
        r.add(new SyncMeasurement(SyncBackend.NCCL, "cuda", 4, 2L << 20, DType.FP32, 50, 48, 60, 20, 0, SyncMeasurement.HOST_TIMING));
        r.add(new SyncMeasurement(SyncBackend.NCCL, "cuda", 4, 1L << 20, DType.FP32, 47.3, 45, 50, 20, 0, SyncMeasurement.HOST_TIMING));
        r.add(new SyncMeasurement(SyncBackend.PTX, "cuda", 4, 1L << 20, DType.FP32, 40, 38, 44, 20, 0, SyncMeasurement.HOST_TIMING));
        r.add(new SyncMeasurement(SyncBackend.PTX, "cuda", 4, 8L << 20, DType.FP32, 80, 78, 90, 20, 0, SyncMeasurement.HOST_TIMING));
        r.add(new SyncMeasurement(SyncBackend.PTX, "cuda", 4, 1L << 20, DType.BF16, 40, 38, 44, 20, 0, SyncMeasurement.HOST_TIMING));
        r.addReference(ref);
        List<BenchReport.Comparison> c = r.compare(ref);
        assertEquals(List.of("nccl@1048576", "ptx@1048576", "nccl@2097152"),
                c.stream().map(x -> x.ours().backend().label() + "@" + x.ours().bytes()).toList(), "8M: the reference has none; bf16: it measured float");
        BenchReport.Comparison nccl1m = c.getFirst();
        assertEquals(2.0, nccl1m.timeDiffUs(), 1e-9);
        assertEquals(nccl1m.ours().busbwGBs() / 34.72, nccl1m.busbwRatio(), 1e-12);
        var json = r.toJson(new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode(),
                new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode());
        var refs = json.get("references");
        assertEquals(1, refs.size());
        assertEquals(AllReduceReference.TORCH_LABEL, refs.get(0).get("label").asText());
        assertEquals(3, refs.get(0).get("rows").size());
        assertEquals(45.3, refs.get(0).get("rows").get(0).get("timeUs").asDouble());
        assertEquals(3, refs.get(0).get("comparison").size());
        assertEquals(40 - 45.3, refs.get(0).get("comparison").get(1).get("timeDiffUs").asDouble(), 1e-9); // ptx at 1M
    }
}
