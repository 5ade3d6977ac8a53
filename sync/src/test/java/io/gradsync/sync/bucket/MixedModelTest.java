package io.gradsync.sync.bucket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.DType;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The synthetic model behind {@code bench --model mixed} and the bucket tests. */
class MixedModelTest {

    @ParameterizedTest(name = "{0} tensors, {1} B of {2}")
    @CsvSource({
        "300, 268435456, fp32",    // the bench's default: 256M
        "300, 268435456, bf16",
        "500, 1073741824, fp16",
        "50,  4194304,   fp32",    // the CLI test's small model
        "1000, 67108864, fp32",
    })
    void hundredsOfLogUniformTensorsOfExactlyTheAskedSize(int tensors, long bytes, String type) {
        DType dtype = DType.parse(type);
        MixedModel m = MixedModel.generate(7, tensors, bytes, dtype);
        assertEquals(tensors, m.size());
        assertEquals(bytes / dtype.bytes() * dtype.bytes(), m.totalBytes(), "whole elements of the asked size");
        assertTrue(m.parameters().stream().allMatch(p -> p.dtype() == dtype && p.count() >= 1), "one dtype, no empty tensor");
        Set<String> names = new HashSet<>();
        m.parameters().forEach(p -> assertTrue(names.add(p.name()), "unique: " + p.name()));
        assertEquals("embedding.weight", m.parameters().getFirst().name());
        assertEquals(m.largest(), m.parameters().getFirst(), "the embedding is the largest tensor");
        double share = (double) m.largest().count() / m.totalCount();
        assertTrue(share > 0.2 && share < 0.35, "embedding holds about a quarter: " + share);
        assertTrue(m.parameters().get(1).name().equals("layer0.weight") && m.parameters().get(2).name().equals("layer0.bias"),
                m.parameters().subList(0, 3).toString());

        // log-uniform: tiny tensors and large ones, spread over every decade in between
        List<MixedModel.Parameter> layers = m.parameters().subList(1, m.size());
        long max = layers.stream().mapToLong(MixedModel.Parameter::count).max().orElseThrow();
        assertTrue(m.smallest().count() <= 10, "a few elements at the low end: " + m.smallest());
        assertTrue(max >= 10_000, "large matrices at the high end: " + max);
        int decades = (int) Math.floor(Math.log10(max));
        for (int d = 0; d < decades; d++) {
            long lo = (long) Math.pow(10, d);
            long hi = lo * 10;
            long inDecade = layers.stream().filter(p -> p.count() >= lo && p.count() < hi).count();
            assertTrue(inDecade >= tensors / (4 * (decades + 1)), "decade " + lo + ".." + hi + " holds " + inDecade + " of " + tensors);
        }
        // the weight of each layer is the larger of its pair
        for (int i = 1; i + 1 < m.size(); i += 2) {
            assertTrue(m.parameters().get(i).count() >= m.parameters().get(i + 1).count(), m.parameters().get(i) + " vs bias");
        }
    }

    @Test
    void theDefaultModelSpansAFewElementsToTensOfMillions() {
        MixedModel m = MixedModel.generate(1, MixedModel.DEFAULT_TENSORS, 256L << 20, DType.BF16);
        assertTrue(m.largest().count() >= 10_000_000, m.toString());
        assertTrue(m.smallest().count() <= 4, m.toString());
    }

    @Test
    void seededAndDenseOffsetsCoverTheModel() {
        MixedModel a = MixedModel.generate(42, 300, 64L << 20, DType.FP32);
        assertEquals(a, MixedModel.generate(42, 300, 64L << 20, DType.FP32), "same seed, same model");
        assertNotEquals(a.parameters(), MixedModel.generate(43, 300, 64L << 20, DType.FP32).parameters());
        long[] offsets = a.denseOffsets();
        assertEquals(a.size() + 1, offsets.length);
        assertEquals(0, offsets[0]);
        assertEquals(a.totalBytes(), offsets[a.size()]);
        assertEquals(a.parameters().getLast(), a.backwardOrder().getFirst());
    }

    @Test
    void oneTensorIsTheEmbeddingAlone() {
        MixedModel m = MixedModel.generate(1, 1, 1000, DType.FP16);
        assertEquals(List.of(new MixedModel.Parameter("embedding.weight", 500, DType.FP16)), m.parameters());
    }

    @Test
    void tooSmallOrEmptyModelsAreRejectedWithTheNumbers() {
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                () -> MixedModel.generate(1, 300, 1024, DType.FP32));
        assertTrue(small.getMessage().contains("256 fp32 elements") && small.getMessage().contains("300 tensors"), small.getMessage());
        assertThrows(IllegalArgumentException.class, () -> MixedModel.generate(1, 0, 1 << 20, DType.FP32));
    }

    @Test
    void registersIntoBucketsInModelOrder() {
        List<JvmDevice> devices = JvmRuntime.createDevices(2);
        try (GradientBuckets b = MixedModel.generate(3, 60, 1 << 20, DType.FP32).buckets(devices, 64 << 10)) {
            assertEquals(60, b.parameters().size());
            assertEquals("embedding.weight", b.parameters().getFirst());
            assertTrue(b.buckets().size() > 3, "a 1 MiB model in 64 KiB buckets: " + b.buckets().size());
            assertEquals("embedding.weight", b.buckets().getLast().parameters().getLast(), "backward reaches it last");
        } finally {
            devices.forEach(JvmDevice::close);
        }
    }
}
