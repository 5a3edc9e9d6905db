# Lowers every bundled seed model to a .pte, one rule per stage (make -j safe).
#   make -f scripts/lower-models.mk BIN=build/bin OUT=out -j2
BIN ?= build/bin
OUT ?= out
MODELS_DIR ?= testdata/models

# Single-method models (composed needs exir-partition's composition flow, not here yet).
MODELS := simple_conv basic basic_dynamic simple_conv_quantized lowerable_sin foo model_addmul m_linear_clamp
PTES := $(MODELS:%=$(OUT)/%.pte) $(OUT)/encode_decode.pte

all: $(PTES)

$(OUT):
	mkdir -p $@

$(OUT)/%.edge.json: $(MODELS_DIR)/%.pt2 $(BIN)/exir-edge | $(OUT)
	$(BIN)/exir-edge $< -o $@

$(OUT)/encode_decode.edge.json: $(MODELS_DIR)/encode.pt2 $(MODELS_DIR)/decode.pt2 $(BIN)/exir-edge | $(OUT)
	$(BIN)/exir-edge --method encode=$(MODELS_DIR)/encode.pt2 --method decode=$(MODELS_DIR)/decode.pt2 -o $@

$(OUT)/%.plan.json: $(OUT)/%.edge.json $(BIN)/exir-plan
	$(BIN)/exir-plan $< -o $@

$(OUT)/%.pte: $(OUT)/%.plan.json $(BIN)/exir-emit
	$(BIN)/exir-emit $< -o $@

.PHONY: all
.SECONDARY:
