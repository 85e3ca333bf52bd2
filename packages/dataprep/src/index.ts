// Dedup, decontamination and the 150M-ladder decision, pure, land here with the data-prep stage.
export {};
