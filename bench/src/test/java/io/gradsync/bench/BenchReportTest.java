package io.gradsync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.SyncBackend;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class BenchReportTest {

    private static SyncMeasurement row(SyncBackend b, long bytes, DType t, double micros) {
        return new SyncMeasurement(b, "jvm", 4, bytes, t, micros, micros * 0.9, micros * 1.2, 5, 0, SyncMeasurement.HOST_TIMING);
    }

    @Test
    void winnerPerDtypeAndSizeIsTheHighestBusbw() {
        BenchReport r = new BenchReport();
        r.add(row(SyncBackend.CPU, 1 << 20, DType.FP32, 100));
        r.add(row(SyncBackend.CPU, 1 << 24, DType.FP32, 1000));
        r.add(row(SyncBackend.NCCL, 1 << 20, DType.FP32, 200));   // slower at 1M
        r.add(row(SyncBackend.NCCL, 1 << 24, DType.FP32, 500));   // faster at 16M
        r.add(row(SyncBackend.NCCL, 1 << 20, DType.BF16, 50));
        List<BenchReport.Winner> w = r.winners();
        assertEquals(3, w.size());
        assertEquals("cpu", w.get(0).backend());
        assertEquals(1 << 20, w.get(0).bytes());
        assertEquals("nccl", w.get(1).backend());
        assertEquals(1 << 24, w.get(1).bytes());
        assertEquals(DType.BF16, w.get(2).dtype());
        assertEquals("nccl", r.runnerUp(w.get(0)).orElseThrow().backend().label());
        assertTrue(r.runnerUp(w.get(2)).isEmpty(), "bf16 ran on one backend only");
    }

    @Test
    void hostStagingBoundIsTheSlowerDirectionSharedByTheReplicasAsBusbw() {
        List<LinkProbe.Link> links = List.of(new LinkProbe.Link("H2D all 4", 4, 40), new LinkProbe.Link("D2H all 4", 4, 20),
                new LinkProbe.Link("peer jvm:0->jvm:1", 1, 30), new LinkProbe.Link("D2D jvm:0 (read+write)", 2, 100));
        List<LinkBound> bounds = LinkBound.from("opencl", links, 4);
        LinkBound staging = bounds.stream().filter(b -> b.name().equals("host staging")).findFirst().orElseThrow();
        // algbw <= 20/4 = 5 GB/s; busbw = algbw * 2 * 3/4 = 7.5
        assertEquals(7.5, staging.busbwGBs(), 1e-9);
        LinkBound peer = bounds.stream().filter(b -> b.name().startsWith("peer")).findFirst().orElseThrow();
        assertEquals(30, peer.busbwGBs(), 1e-9);
        assertTrue(Double.isNaN(bounds.stream().filter(b -> b.name().startsWith("H2D")).findFirst().orElseThrow().busbwGBs()));
        assertEquals(List.of("peer jvm:0->jvm:1", "host staging"),
                bounds.stream().filter(LinkBound::drawn).map(LinkBound::name).toList());
        // JVM devices: cpu averages in place, so no staging bound is drawn under its curve
        assertTrue(LinkBound.from("jvm", links, 4).stream().noneMatch(b -> b.name().equals("host staging")));
    }

    @Test
    void backendsLiveOnTheirOwnRuntimes() {
        BackendDevices d = new BackendDevices(DeviceRuntime.JVM, 4);
        assertEquals(DeviceRuntime.JVM, d.runtimeOf(SyncBackend.CPU));
        assertEquals(DeviceRuntime.OPENCL, d.runtimeOf(SyncBackend.OPENCL));
        assertEquals(DeviceRuntime.CUDA, d.runtimeOf(SyncBackend.PTX));
        assertEquals(DeviceRuntime.CUDA, d.runtimeOf(SyncBackend.NCCL));
        d.close();
    }

    @Test
    void openClBackendGetsDistinctOpenClDevicesOfOnePlatformAndTooManyIsExplained() {
        Assumptions.assumeTrue(DeviceCatalog.status(DeviceRuntime.OPENCL).available(), "no OpenCL here");
        int listed = DeviceCatalog.listed(DeviceRuntime.OPENCL).size();
        try (BackendDevices pool = new BackendDevices(DeviceRuntime.JVM, Math.min(2, listed))) {
            List<? extends Device> d = pool.devicesFor(SyncBackend.OPENCL);
            assertEquals(Math.min(2, listed), new HashSet<>(d).size());
            d.forEach(x -> assertEquals(DeviceRuntime.OPENCL, x.runtime()));
            assertEquals(DeviceRuntime.JVM, pool.devicesFor(SyncBackend.CPU).getFirst().runtime());
        }
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> BackendDevices.openCl(listed + 1));
        assertTrue(e.getMessage().contains((listed + 1) + " OpenCL devices"), e.getMessage());
    }
}
