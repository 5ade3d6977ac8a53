package io.gradsync.tasks.kernels;

import org.junit.jupiter.api.Test;

class EmitSmokeTest {
    @Test
    void printSome() {
        var k = BuiltinKernels.byName("average3").orElseThrow().compile();
        System.out.println(k.ptx(90));
        System.out.println(k.openCl());
        var s = BuiltinKernels.byName("sumOfSquaresBf16").orElseThrow().compile();
        System.out.println(s.ptx(90));
        System.out.println(s.openCl());
    }
}
