# lit configuration for the exir tools' golden tests.
import os
import lit.formats

config.name = "exir"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.exir_bin_dir, "..", "testdata", "lit")
config.excludes = ["Inputs", "CMakeLists.txt"]

# Tools first on PATH: ours, then FileCheck / not / split-file.
config.environment["PATH"] = os.pathsep.join(
    [config.exir_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("%models", os.path.join(config.exir_src_dir, "testdata", "models")))
config.substitutions.append(("%inputs", os.path.join(config.exir_src_dir, "testdata", "lit", "Inputs")))
config.substitutions.append(("%shared", os.path.normpath(os.path.join(config.exir_src_dir, "..", "shared"))))
config.substitutions.append(("%src", config.exir_src_dir))
config.substitutions.append(("%python", config.python))

# Sparse files (holes): the >4 GB constant tests need them to stay small and fast.
def _has_sparse_files(directory):
    import tempfile
    os.makedirs(directory, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=directory) as f:
        f.truncate(64 << 20)
        f.flush()
        return os.stat(f.name).st_blocks * 512 < (1 << 20)

# A pseudo-terminal (script(1) runs a tool with a terminal as stdout).
def _has_pty():
    try:
        master, slave = os.openpty()
    except OSError:
        return False
    os.close(master)
    os.close(slave)
    return True

if _has_pty():
    config.available_features.add("pty")
else:
    lit_config.note("no pseudo-terminal: the tests that need a terminal are unsupported")

if _has_sparse_files(config.test_exec_root):
    config.available_features.add("sparse-files")
else:
    lit_config.note("no sparse files in %s: the >4 GB constant tests are unsupported" % config.test_exec_root)
