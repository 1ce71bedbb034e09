// The one source of secmode_test_pch (tests/CMakeLists.txt): the target
// exists to build the tests' precompiled header, which every test reuses.
