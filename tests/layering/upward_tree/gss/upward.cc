// Fixture of tests/layering: a lower folder including from a higher one.
#include "suite/suite.h"
