// `trnsim run|profile FILE.py:FUNCTION ...`: a Python NKI kernel, handed to the Python front
// end's command line (python/trnsim/cli.py) in the interpreter it was built for.
#pragma once

namespace trnsim::cli {

// Whether the command line names a Python kernel (run or profile, then an argument that
// contains ".py:" or ends in ".py").
bool names_python_kernel(int argc, char** argv);

// Replaces this process with `python3 -m trnsim ARGS...`, the package found next to this
// executable (the build tree's python/ or the install's lib/trnsim/python). Returns only when
// it cannot (an exit status, the reason printed).
int run_python_kernel(int argc, char** argv);

}  // namespace trnsim::cli
