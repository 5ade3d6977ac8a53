package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.kernels.JvmFastForms.Chunk;
import io.gradsync.tasks.kernels.JvmFastForms.Type;
import io.gradsync.tasks.kernels.internal.Lanes;

import java.lang.foreign.MemorySegment;

import static io.gradsync.tasks.kernels.JvmFastForms.CHUNK;
import static io.gradsync.tasks.kernels.JvmFastForms.fits;

/**
 * The JVM fast forms of the element-wise kernels ({@link ElementwiseKernels}): the 16-bit kernels'
 * fp32 arithmetic a chunk at a time ({@link JvmFastForms}), or for bf16 in SIMD lanes where there
 * are ({@link Lanes}), and the copies as bulk copies. fp32 {@code scale} has a form in lanes alone;
 * the other fp32 kernels and {@code scaleF16} have none: each reads one segment besides the one it
 * writes, or only that one, which C2 vectorizes in the kernel itself.
 */
final class ElementwiseJvmForm {
    private ElementwiseJvmForm() {
    }

    /** The form of element-wise kernel {@code name}, or null if it has none. */
    static JvmFastForm of(String name) {
        return switch (name) {
            case "sumIntoBf16", "sumIntoF16" -> ElementwiseJvmForm::sumInto;
            case "scaleBf16" -> ElementwiseJvmForm::scale; // scaleF16 reads one segment: C2 vectorizes the kernel itself
            // as for scaleF16 without lanes: the form must take every slice of arrays it takes whole
            case "scale" -> Lanes.available() ? ElementwiseJvmForm::scale : null;
            case "copy", "copyBf16", "copyF16" -> ElementwiseJvmForm::copy;
            default -> null;
        };
    }

    /** {@code acc[i] = acc[i] + x[i]}, in fp32. */
    private static boolean sumInto(Object[] args) {
        KernelArray acc = (KernelArray) args[0];
        KernelArray x = (KernelArray) args[1];
        if (!fits(acc, x)) {
            return false;
        }
        Type t = Type.of(acc);
        if (t == Type.BF16 && Lanes.available()) {
            Lanes.sumIntoBf16(acc.segment(), x.segment(), acc.getSize());
            return true;
        }
        Chunk c = Chunk.ofThisThread();
        for (int at = 0; at < acc.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, acc.getSize() - at);
            t.loadSum(c, acc.segment(), x.segment(), at, count);
            t.store(c, acc.segment(), at, count);
        }
        return true;
    }

    /** {@code x[i] = x[i] * s}, in fp32. */
    private static boolean scale(Object[] args) {
        KernelArray x = (KernelArray) args[0];
        float s = (Float) args[1];
        if (!fits(x)) {
            return false;
        }
        Type t = Type.of(x);
        if (t == Type.BF16 && Lanes.available()) {
            Lanes.scaleBf16(x.segment(), s, x.getSize());
            return true;
        }
        if (t == Type.F32 && Lanes.available()) {
            Lanes.scaleF32(x.segment(), s, x.getSize());
            return true;
        }
        Chunk c = Chunk.ofThisThread();
        for (int at = 0; at < x.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, x.getSize() - at);
            t.load(c, x.segment(), at, count, c.f, c.fView);
            c.scale(s);
            t.store(c, x.segment(), at, count);
        }
        return true;
    }

    /**
     * {@code out[i] = in[i]}: the bits themselves, in one bulk copy, which the kernel's trip through
     * fp32 gives too for every value but a NaN (whose payload no form pins down).
     */
    private static boolean copy(Object[] args) {
        KernelArray out = (KernelArray) args[0];
        KernelArray in = (KernelArray) args[1];
        if (!fits(out, in)) {
            return false;
        }
        MemorySegment.copy(in.segment(), 0, out.segment(), 0, (long) out.getSize() * out.elementBytes());
        return true;
    }
}
