/*
 * gpusched — writing a Kubernetes quantity. The parser is gs_quantity_parse()
 * (gpusched/scenario.h); this is its inverse for a count in thousandths, so the daemon's answers,
 * stored objects and the admission messages all spell a quantity one way, the way Kubernetes does.
 * Depends on nothing but libc; reentrant.
 */
#ifndef GPUSCHED_QUANTITY_H
#define GPUSCHED_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#define GS_QUANTITY_STR_MAX                                                                        \
    24 /* bytes for any int64_t written by gs_quantity_format_milli(), NUL too */

/*
 * gs_quantity_format_milli() - @milli thousandths (milli-cores, thousandths of a GPU, a ratio in
 * thousandths) as Kubernetes writes a DecimalSI quantity: resource.Quantity's String(), whose
 * CanonicalizeBytes (k8s.io/apimachinery/pkg/api/resource, int64Amount.AsCanonicalBytes) takes
 * the trailing zeros into an exponent, rounded down to a multiple of 3, written as the suffix
 * m, (none), k, M, G, T, P or E; zero is "0". So 1500 -> "1500m", 2000 -> "2", 20000000 ->
 * "20k", -500 -> "-500m". gs_quantity_parse(@buf, 3, 0, 0, &v) gives @milli back for any
 * @milli >= 0.
 * @buf: @size bytes, the caller's (GS_QUANTITY_STR_MAX holds any value; less is cut as snprintf
 * cuts). Return: @buf.
 */
char *gs_quantity_format_milli(int64_t milli, char *buf, size_t size);

/*
 * gs_quantity_format_mib() - @mib MiB (memory) as Kubernetes writes a BinarySI quantity
 * (resource.Quantity's String(), CanonicalizeBytes): the largest of Mi, Gi, Ti, Pi and Ei that
 * divides it, so 32768 -> "32Gi", 1536 -> "1536Mi", 0 -> "0". gs_quantity_parse(@buf, 0, -20, 0,
 * &v) gives @mib back. @buf: as gs_quantity_format_milli()'s. Return: @buf.
 */
char *gs_quantity_format_mib(int64_t mib, char *buf, size_t size);

#endif
