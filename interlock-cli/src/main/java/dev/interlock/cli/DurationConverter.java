package dev.interlock.cli;

import dev.interlock.spi.support.Durations;
import java.time.Duration;
import picocli.CommandLine;

/** Reads a DURATION option of the command line with the grammar every backend's URI options share ({@link Durations}). */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }
}
