# Lowers every bundled seed model to a .pte, one rule per stage (make -j safe).
#   make -f scripts/lower-models.mk BIN=build/bin OUT=out -j2
BIN ?= build/bin
OUT ?= out
MODELS_DIR ?= testdata/models

# Models lowered without delegation (encode/decode go into one two-method program).
MODELS := simple_conv basic basic_dynamic simple_conv_quantized lowerable_sin foo model_addmul m_linear_clamp
PTES := $(MODELS:%=$(OUT)/%.pte) $(OUT)/encode_decode.pte

all: $(PTES) delegated

$(OUT):
	mkdir -p $@

$(OUT)/%.edge.json: $(MODELS_DIR)/%.pt2 $(BIN)/exir-edge | $(OUT)
	$(BIN)/exir-edge $< -o $@

$(OUT)/encode_decode.edge.json: $(MODELS_DIR)/encode.pt2 $(MODELS_DIR)/decode.pt2 $(BIN)/exir-edge | $(OUT)
	$(BIN)/exir-edge --add-method encode=$(MODELS_DIR)/encode.pt2 --add-method decode=$(MODELS_DIR)/decode.pt2 -o $@

$(OUT)/%.plan.json: $(OUT)/%.edge.json $(BIN)/exir-plan
	$(BIN)/exir-plan $< -o $@

$(OUT)/%.pte: $(OUT)/%.plan.json $(BIN)/exir-emit
	$(BIN)/exir-emit $< -o $@

# Delegated seed models (exir-partition): Foo and Model with AddMulPartitionerDemo,
# LowerableModule lowered whole to BackendWithCompilerDemo, and ComposedModule
# calling that lowered module.  make -f scripts/lower-models.mk delegated
DELEGATED_PTES := $(OUT)/foo.delegated.pte $(OUT)/model_addmul.delegated.pte \
                  $(OUT)/lowerable_sin.delegated.pte $(OUT)/composed.pte
DELEGATED_PLANS := $(DELEGATED_PTES:%.pte=%.plan.json)

delegated: $(DELEGATED_PTES)

$(OUT)/foo.delegated.part.json $(OUT)/model_addmul.delegated.part.json: $(OUT)/%.delegated.part.json: $(OUT)/%.edge.json $(BIN)/exir-partition
	$(BIN)/exir-partition $< --partitioner AddMulPartitionerDemo -o $@

$(OUT)/lowerable_sin.delegated.part.json: $(OUT)/lowerable_sin.edge.json $(BIN)/exir-partition
	$(BIN)/exir-partition $< --whole-module BackendWithCompilerDemo --compile-spec max_value=4 -o $@

$(OUT)/composed.part.json: $(OUT)/composed.edge.json $(OUT)/lowerable_sin.delegated.part.json $(BIN)/exir-partition
	$(BIN)/exir-partition $< --lowered lowered_module_0=$(OUT)/lowerable_sin.delegated.part.json -o $@

$(DELEGATED_PLANS): $(OUT)/%.plan.json: $(OUT)/%.part.json $(BIN)/exir-plan
	$(BIN)/exir-plan $< -o $@

.PHONY: all delegated
.SECONDARY:
