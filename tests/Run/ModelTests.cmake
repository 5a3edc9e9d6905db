# exir-run checks over whole models, as ctests (run from the source root so
# that ../shared resolves; outputs go under the build tree).

# Seed models (scripts/lower-models.mk stems): edge JSON, planned JSON and .pte
# must agree on seeded random inputs. Extra words after a stem are its methods.
set(EXIR_RUN_SEED_MODELS
  basic basic_dynamic simple_conv simple_conv_quantized lowerable_sin foo model_addmul m_linear_clamp
  # encode/decode compute linear(x, randn(...)): exir-run reseeds the random
  # kernels before every run, so the stages draw the same numbers.
  "encode_decode encode decode"
  # Delegated (BackendWithCompilerDemo): the .part.json, planned JSON and .pte agree.
  foo.delegated lowerable_sin.delegated composed)
# model_addmul.delegated is left out: its lone add delegate reads a fourth
# delegate argument that does not exist in upstream's test backend too.

# ../shared/corpus/torch-export programs that lower today; each .pte must
# reproduce eager PyTorch's outputs. Add names here as exir-edge learns more.
set(EXIR_RUN_CORPUS_MODELS convbn_eval convbn_train embed_argmax mlp_dynbatch
  kv_index_copy lstm nonzero mobilenet_v2_w025 mobilenet_v3_small_w025 bert_tiny gpt2_tiny vit_small_timm
  cond gpt2_tiny_dynseq)

foreach(entry ${EXIR_RUN_SEED_MODELS})
  separate_arguments(words UNIX_COMMAND "${entry}")
  list(POP_FRONT words stem)
  set(methods ${words})
  add_test(NAME run.model.${stem}
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/Run/check-model-stages.sh ${CMAKE_BINARY_DIR}/bin
                   ${CMAKE_BINARY_DIR}/run-models/${stem} ${stem} ${methods}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endforeach()

foreach(name ${EXIR_RUN_CORPUS_MODELS})
  add_test(NAME run.corpus.${name}
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/Run/check-corpus-model.sh ${CMAKE_BINARY_DIR}/bin
                   ${CMAKE_BINARY_DIR}/run-corpus ${name}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endforeach()

# testdata/ops: one real torch 2.11 export per operator case (scripts/export_op_cases.py).
# Every case must lower and reproduce eager PyTorch's outputs, except the ones
# listed in testdata/ops/unsupported.txt, which may instead be refused cleanly
# (one-line error, exit 1) but never crash or compute wrong numbers.
file(GLOB op_case_files RELATIVE ${CMAKE_SOURCE_DIR}/testdata/ops ${CMAKE_SOURCE_DIR}/testdata/ops/*.pt2)
file(STRINGS ${CMAKE_SOURCE_DIR}/testdata/ops/unsupported.txt unsupported_lines REGEX "^[a-z0-9_]")
set(unsupported_op_cases)
foreach(line ${unsupported_lines})
  string(REGEX MATCH "^[a-z0-9_]+" case_name "${line}")
  list(APPEND unsupported_op_cases ${case_name})
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/ops/unsupported.txt)
foreach(file ${op_case_files})
  string(REGEX REPLACE "\\.pt2$" "" name ${file})
  set(mode "")
  if(name IN_LIST unsupported_op_cases)
    set(mode unsupported)
  endif()
  add_test(NAME run.op.${name}
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/Run/check-export-case.sh ${CMAKE_BINARY_DIR}/bin
                   ${CMAKE_BINARY_DIR}/run-ops testdata/ops ${name} ${mode}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endforeach()
