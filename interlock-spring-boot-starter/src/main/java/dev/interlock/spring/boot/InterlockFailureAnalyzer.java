package dev.interlock.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns an {@link InterlockPropertyException} anywhere in a failed start-up's causes into Boot's
 * "APPLICATION FAILED TO START" report: what was wrong, with the property names, and what to
 * change, instead of a stack trace of bean creation.
 */
class InterlockFailureAnalyzer extends AbstractFailureAnalyzer<InterlockPropertyException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InterlockPropertyException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
    }
}
