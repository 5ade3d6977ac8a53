package io.gradsync.bench;

import java.util.Arrays;

/** Median and range of timed calls, in microseconds: what every table and JSON figure reports. */
public record Timing(double medianMicros, double minMicros, double maxMicros) {

    public static Timing of(double[] micros) {
        if (micros.length == 0) {
            throw new IllegalArgumentException("no timed calls");
        }
        double[] t = micros.clone();
        Arrays.sort(t);
        int n = t.length;
        double median = n % 2 == 1 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
        return new Timing(median, t[0], t[n - 1]);
    }

    /** (max - min) / median, in percent. */
    public double spreadPercent() {
        return (maxMicros - minMicros) / medianMicros * 100;
    }
}
