package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.KernelArray;

/**
 * The JVM fast form of the conversions ({@link ConversionKernels}): the element-wise copy between
 * element types ({@link ElementwiseJvmForm#transfer}), a chunk at a time.
 */
final class ConversionJvmForm {
    private ConversionJvmForm() {
    }

    /** The form of conversion {@code name}, or null if it has none. */
    static JvmFastForm of(String name) {
        return switch (name) {
            case "bf16ToF32", "f16ToF32", "f32ToBf16", "f32ToF16" -> ConversionJvmForm::convert;
            default -> null;
        };
    }

    /** {@code out[i] = in[i]} between the float types, widened or rounded to nearest even as the kernels' {@code set}. */
    private static boolean convert(Object[] args) {
        return ElementwiseJvmForm.transfer((KernelArray) args[0], (KernelArray) args[1]);
    }
}
