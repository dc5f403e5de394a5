package io.tidemark.cli;

public final class TidemarkCommand {
    public static void main(String[] args) {
    }
}
