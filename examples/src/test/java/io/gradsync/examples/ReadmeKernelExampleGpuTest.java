package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's own-kernel example on a CUDA GPU, as PTX. */
@Tag("gpu")
class ReadmeKernelExampleGpuTest {
    @Test
    void onCuda(@TempDir Path out) throws Exception {
        String printed = ReadmeKernelExample.run("cuda", out);
        assertTrue(printed.contains("on cuda:0: the same bits as Java"), printed);
    }
}
