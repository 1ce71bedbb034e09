// Fixture of tests/layering: an upward include written with angle brackets.
#include <harness/modes.h>
