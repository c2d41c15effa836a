/**
 * Internal API, shared by Interlock's own modules: not for use by applications, and subject to
 * change in any release without notice.
 */
package dev.interlock.internal;
