/**
 * Interlock for Spring Boot 4: auto-configuration of the lock space from {@code interlock.*}
 * properties ({@link dev.interlock.spring.boot.InterlockProperties}) or the application's
 * {@code DataSource}, of ShedLock's {@code LockProvider} and Spring Integration's
 * {@code LockRegistry} on it, of metrics and observations, and of the actuator's health indicator
 * and {@link dev.interlock.spring.boot.LocksEndpoint /actuator/locks}. Applications use the beans;
 * the classes here are not meant to be called. See {@code docs/spring-boot.md}.
 */
package dev.interlock.spring.boot;
