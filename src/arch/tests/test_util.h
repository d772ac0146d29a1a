// Helpers shared by the arch tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "arch/arch.h"

namespace trnsim::arch::testing {

// The source tree, as CTest passes it (set by trnsim_add_test); falls back to the
// compile-time location so the binary also runs by hand.
inline std::string source_dir() {
  const char* dir = std::getenv("TRNSIM_SOURCE_DIR");
  return dir != nullptr ? dir : TRNSIM_TEST_SOURCE_DIR;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Loads `text` and expects a ConfigError on `field`, located in the file it was read from,
// whose message contains `needle`.
inline ::testing::AssertionResult fails_with(const std::string& text, const std::string& field,
                                             const std::string& needle) {
  try {
    load_json_text(text, "test.json");
  } catch (const ConfigError& e) {
    const std::string message = e.diagnostics().front().message;
    if (e.where().file != "test.json") {
      return ::testing::AssertionFailure() << "error not located in test.json: " << e.what();
    }
    if (std::string(e.what()).rfind("test.json", 0) != 0) {
      return ::testing::AssertionFailure() << "what() does not start with the file: " << e.what();
    }
    if (e.field() != field) {
      return ::testing::AssertionFailure()
             << "error on field \"" << e.field() << "\", expected \"" << field << "\": " << message;
    }
    if (!field.empty() && message.rfind(field + ": ", 0) != 0) {
      return ::testing::AssertionFailure() << "message does not start with the path: " << message;
    }
    if (message.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks \"" << needle << "\": " << message;
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "loaded without error: " << text;
}

}  // namespace trnsim::arch::testing
