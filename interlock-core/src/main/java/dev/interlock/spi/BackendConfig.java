package dev.interlock.spi;

import dev.interlock.Ticker;
import java.time.Clock;
import java.time.Duration;

/**
 * What a backend is opened with.
 *
 * @param uri the whole URI as the user gave it
 * @param scheme the scheme, lower case, without the colon
 * @param location everything after the first colon (a path, a JDBC URL, a host)
 * @param ticker monotonic time for every deadline
 * @param clock wall clock, for display only
 * @param defaultLease lease when a request sets none
 */
public record BackendConfig(String uri, String scheme, String location, Ticker ticker, Clock clock, Duration defaultLease) {}
