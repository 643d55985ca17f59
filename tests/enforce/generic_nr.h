#ifndef CF_TEST_GENERIC_NR_H
#define CF_TEST_GENERIC_NR_H

/* The generic table's numbers (generic_nr.c), by name; a null name ends it. */
struct generic_nr {
	const char *name;
	unsigned nr;
};
extern const struct generic_nr generic_nr[];

#endif
