// Fixture of tests/layering: a library including CLI11.
#include <CLI/CLI.hpp>
#include "render/format.h"
