package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class SyncBackendTest {

    @ParameterizedTest
    @CsvSource({
        "single, SINGLE", "none, SINGLE", "SINGLE, SINGLE", "' None ', SINGLE",
        "cpu, CPU", "cpu-staging, CPU", "cpu_staging, CPU", "CPU_Staging, CPU",
        "ptx, PTX", "PTX, PTX", "opencl, OPENCL", "OpenCL, OPENCL", "nccl, NCCL", "NCCL, NCCL",
        "auto, AUTO", "Auto, AUTO"
    })
    void parsesNamesAndAliasesIgnoringCase(String text, SyncBackend expected) {
        assertEquals(expected, SyncBackend.parse(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"gloo", "cpu staging", "cuda", "nccl2", "-", "single,cpu"})
    void rejectsUnknownNamesNamingTheValueAndTheValidOnes(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SyncBackend.parse(text));
        assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
        for (String valid : new String[] {"single", "none", "cpu", "cpu-staging", "cpu_staging", "ptx", "opencl", "nccl", "auto"}) {
            assertTrue(e.getMessage().contains(valid), "message lists " + valid + ": " + e.getMessage());
        }
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"   "})
    void rejectsMissingNames(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SyncBackend.parse(text));
        assertTrue(e.getMessage().startsWith("no sync backend given") && e.getMessage().contains("valid: "), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"fp32, FP32", "float32, FP32", "BF16, BF16", "bfloat16, BF16", "fp16, FP16", "half, FP16"})
    void parsesDtypes(String text, DType expected) {
        assertEquals(expected, DType.parse(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"fp64", "int8", ""})
    void rejectsUnknownDtypes(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DType.parse(text));
        assertTrue(e.getMessage().contains("fp32, bf16, fp16"), e.getMessage());
    }
}
