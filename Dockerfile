# One image for every Turnstream service: docker-compose.yml runs `topics`, `topology`,
# `tool-executor` and `gateway` from it. Build: docker build -t turnstream .
FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY .mvn .mvn
COPY mvnw pom.xml ./
COPY src src
COPY schemas schemas
COPY connectors connectors
RUN ./mvnw -B -q -DskipTests package

FROM eclipse-temurin:17-jre
RUN useradd --system --uid 10001 --no-create-home turnstream \
    && mkdir -p /var/lib/turnstream /workspace \
    && chown turnstream /var/lib/turnstream /workspace
COPY --from=build /src/target/turnstream.jar /app/turnstream.jar
USER turnstream
# gateway HTTP API and web view; topology /health
EXPOSE 8080 8081
# JAVA_OPTS passes JVM flags (heap, remote JMX), as with the ./turnstream launcher
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS -jar /app/turnstream.jar \"$@\"", "turnstream"]
CMD ["--help"]
