package io.gradsync.train;

import io.gradsync.sync.DType;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad trainer settings are refused where they are made, naming what is wrong (they trained silently wrong, or failed deep inside). */
class TrainerConfigTest {
    private static DataParallelTrainer.Config config(List<Integer> layers, int batch, float lr, double maxNorm) {
        return new DataParallelTrainer.Config(layers, batch, DType.FP32, DataParallelTrainer.Optimizer.SGD, lr, 1 << 20, maxNorm, 1);
    }

    private static void refused(String expected, Runnable make) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, make::run);
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void badSettingsAreRefusedNamingThem() {
        List<Integer> mlp = List.of(8, 16, 4);
        config(mlp, 32, 0.1f, 0); // a good one
        refused("learning rate must be a finite number > 0, got Infinity", () -> config(mlp, 32, Float.POSITIVE_INFINITY, 0));
        refused("learning rate must be a finite number > 0, got NaN", () -> config(mlp, 32, Float.NaN, 0));
        refused("maxNorm must be finite and >= 0", () -> config(mlp, 32, 0.1f, -1));
        refused("maxNorm must be finite and >= 0", () -> config(mlp, 32, 0.1f, Double.NaN));
        refused("maxNorm must be finite and >= 0", () -> config(mlp, 32, 0.1f, Double.POSITIVE_INFINITY));
        refused("50000 x 50000 weights are more than an array holds", () -> config(List.of(50000, 50000, 2), 32, 0.1f, 0));
        refused("batch 1048576 x width 4096 activations", () -> config(List.of(4096, 2), 1 << 20, 0.1f, 0));
        refused("none null", () -> config(Arrays.asList(8, null, 4), 32, 0.1f, 0));
        refused("none null", () -> config(null, 32, 0.1f, 0));
        refused("more than an array holds", () -> SyntheticData.generate(1, 1 << 28, 16, 3));
    }
}
