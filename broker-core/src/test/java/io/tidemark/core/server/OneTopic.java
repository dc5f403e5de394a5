package io.tidemark.core.server;

import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/** A broker's topics for a test of a service: this one topic, and no changes. */
record OneTopic(Topic topic) implements Topics {
    @Override
    public Topic create(String name, int partitions, int replicationFactor, Map<String, String> overrides) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void delete(String name) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Topic alterConfig(String name, Map<String, String> set, Collection<String> remove) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Topic topic(String name) {
        if (!name.equals(topic.name())) {
            throw Topic.unknown(name);
        }
        return topic;
    }

    @Override
    public List<Topic> topics() {
        return List.of(topic);
    }
}
